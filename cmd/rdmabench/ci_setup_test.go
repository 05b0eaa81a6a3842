package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestCISetupMainJobIsSmall: plain .ci/setup installs only the loopback
// scenario's tools (and npm where missing); the lanes' packages come with
// --tests, which .ci/run passes; sshd is kept from starting and disabled.
func TestCISetupMainJobIsSmall(t *testing.T) {
	b, err := os.ReadFile("../../.ci/setup")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	m := regexp.MustCompile(`(?m)^pkgs=\(([^)]*)\)`).FindStringSubmatch(s)
	if m == nil || strings.Join(strings.Fields(m[1]), " ") != "ucx-utils iperf3" {
		t.Errorf("main job's packages: %q, want ucx-utils iperf3", m)
	}
	i := strings.Index(s, "if $tests; then")
	for _, p := range []string{"chromium", "qemu-system-x86", "openssh-server", "openmpi-bin", "mmdebstrap", "shellcheck"} {
		if i < 0 || !strings.Contains(s[i:], p) || strings.Contains(m[1], p) {
			t.Errorf("%s is installed outside --tests", p)
		}
	}
	for _, want := range []string{"policy-rc.d", "exit 101", "systemctl disable --now"} {
		if !strings.Contains(s, want) {
			t.Errorf(".ci/setup lacks %q", want)
		}
	}
	// .ci/run runs the README's test line exactly as the README writes it
	// (set-up with --tests, then lint and every lane).
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var testLine string
	for _, l := range strings.Split(string(readme), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "./.ci/setup --tests") {
			testLine = l
		}
	}
	run, err := os.ReadFile("../../.ci/run")
	if err != nil || testLine == "" || !strings.Contains(string(run), "\n"+testLine+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q: %v", testLine, err)
	}
	out, err := exec.Command("bash", "../../.ci/setup", "--nope").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "want --tests") {
		t.Errorf(".ci/setup --nope: %v %s", err, out)
	}
}
