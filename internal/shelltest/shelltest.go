// Package shelltest runs shellcheck over the shell scripts the project
// writes inside Go (commands run in pods and on hosts through `sh -c`), so
// that `make lint`'s shellcheck covers them as it covers the files.
package shelltest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// Check runs shellcheck on script as POSIX sh (what `sh -c` runs in the
// images and VMs: dash or busybox) and fails t with its findings. Without
// shellcheck on PATH it skips; `./.ci/setup` installs it, so CI runs it.
// exclude lists codes the caller explains where it calls.
func Check(t *testing.T, name, script string, exclude ...string) {
	t.Helper()
	bin, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck not installed (./.ci/setup installs it)")
	}
	args := []string{"--shell=sh", "--format=gcc"}
	if len(exclude) > 0 {
		args = append(args, "--exclude="+strings.Join(exclude, ","))
	}
	cmd := exec.Command(bin, append(args, "-")...)
	cmd.Stdin = strings.NewReader(script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("shellcheck %s: %v\n%s\nscript:\n%s", name, err, out.String(), numbered(script))
	}
}

func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		b.WriteString(strings.Repeat(" ", 3-len(itoa(i+1))) + itoa(i+1) + "  " + l + "\n")
	}
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
