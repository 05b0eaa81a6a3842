package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLanesHaveBannersTimesAndASummary: each lane of `make test` runs
// through .ci/lane, which prints its name before and its result and time
// after; .ci/lanes-summary prints one line per lane and the total, also
// when a lane failed (make test stops there, as before).
func TestLanesHaveBannersTimesAndASummary(t *testing.T) {
	log := filepath.Join(t.TempDir(), "lanes.log")
	lane := func(args ...string) (string, error) {
		cmd := exec.Command("../../.ci/lane", args...)
		cmd.Env = append(os.Environ(), "LANES_LOG="+log)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := lane("unit", "true")
	if err != nil || !strings.Contains(out, "==== lane unit: true") || !regexp.MustCompile(`==== lane unit: pass in \d+m\d\ds`).MatchString(out) {
		t.Errorf("a passing lane: %v\n%s", err, out)
	}
	out, err = lane("kube", "false")
	if err == nil || !strings.Contains(out, "==== lane kube: FAIL (exit 1) in ") {
		t.Errorf("a failing lane: %v\n%s", err, out)
	}
	sum, err := exec.Command("../../.ci/lanes-summary", log).CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?s)unit\s+pass\s+0m00s.*kube\s+FAIL \(exit 1\)\s+0m00s.*total\s+0m00s`).Match(sum) {
		t.Errorf("summary: %v\n%s", err, sum)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"build", "test-go", "e2e-kube", "e2e-rdma"} {
		if !regexp.MustCompile(`\.ci/lane \S+ \$\(MAKE\) --no-print-directory ` + target + `\b`).Match(mk) {
			t.Errorf("make test does not run %s through .ci/lane", target)
		}
	}
}
