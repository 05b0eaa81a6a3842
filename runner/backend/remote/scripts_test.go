package remote

import (
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// The wrapper every remote tool runs in, and its kill, pass shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	shelltest.Check(t, "Wrap", Wrap([]string{"ib_write_bw", "-d", "rxe0", "--report_gbits", "10.0.0.2"}, map[string]string{"UCX_TLS": "rc,sm"}))
	shelltest.Check(t, "KillScript", KillScript(4242, 2*time.Second))
}
