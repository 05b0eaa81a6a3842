package preflight

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// Preflight's facts script passes shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	// ulimit -l is not POSIX (SC3045), but dash and busybox sh have it,
	// and a shell without it reports no memlock, which preflight says.
	shelltest.Check(t, "FactsScript", FactsScript, "SC3045")
}
