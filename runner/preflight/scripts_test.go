package preflight

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Preflight's facts script passes shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	// ulimit -l is not POSIX (SC3045), but dash and busybox sh have it,
	// and a shell without it reports no memlock, which preflight says.
	shelltest.Check(t, "FactsScript", FactsScript, "SC3045")
}

// The tool probes, run together as preflight runs them, pass shellcheck.
func TestProbeScriptPassesShellcheck(t *testing.T) {
	probes := tools.ProbesOf(&scenarios.Test{Tool: "nixlbench"}, "nixlbench")
	shelltest.Check(t, "ProbeScript", ProbeScript(probes))
}
