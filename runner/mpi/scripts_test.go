package mpi

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// The launcher's scripts pass shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	c := Config{Dir: "/tmp/rdmabench-r1/ssh", Port: 2222, Marker: "RDMABENCH_MPI=r1"}
	shelltest.Check(t, "WriteScript", WriteScript(c))
	shelltest.Check(t, "StartScript", StartScript(c))
	// StopScript splits PID lists on purpose (SC2013, SC2086, SC2116: one
	// word per PID, read from /proc) and counts retries with an unused i
	// (SC2034).
	shelltest.Check(t, "StopScript", StopScript(c), "SC2013", "SC2086", "SC2116", "SC2034")
}
