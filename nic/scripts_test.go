package nic

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// The discovery scripts run through exec pass shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	// dumpScript keeps sysfs globs in variables and expands them on
	// purpose (SC2125, SC2086): every device, port and netdev at once.
	shelltest.Check(t, "dumpScript", dumpScript, "SC2125", "SC2086")
	shelltest.Check(t, "topoScript", topoScript)
}
