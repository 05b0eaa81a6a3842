package tools

import (
	"testing"

	"github.com/rdmabench/rdmabench/tool"
)

// nixlbench refuses any argument containing "fromenv" or "flagfile"; a
// group made of test and endpoint names never carries them.
func TestNixlGroupAvoidsRefusedWords(t *testing.T) {
	for _, name := range []string{"kv-fromenv-r0", "flagfile-test", "tryfromenv"} {
		if g := NixlGroup(name); tool.NixlRefusedWord(g) != "" {
			t.Errorf("%s → %s", name, g)
		}
	}
}
