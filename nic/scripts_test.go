package nic

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// The discovery scripts run through exec pass shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	// DumpScript keeps sysfs globs in variables and expands them on
	// purpose (SC2125, SC2086): every device, port and netdev at once.
	shelltest.Check(t, "DumpScript", DumpScript, "SC2125", "SC2086")
	shelltest.Check(t, "TopoScript", TopoScript)
}
