package pathproof

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// The counter-reading script passes shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	shelltest.Check(t, "Script", Script("rxe0"))
	shelltest.Check(t, "Script(all)", Script(""))
}
