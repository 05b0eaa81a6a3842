package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"

	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

// usesOut reports whether a command of the leg refers to ${out}.
func usesOut(leg *plan.Leg) bool {
	for _, pc := range leg.Commands {
		for _, a := range pc.Argv {
			if strings.Contains(a, tools.PlaceholderOut) {
				return true
			}
		}
		for _, v := range pc.Env {
			if strings.Contains(v, tools.PlaceholderOut) {
				return true
			}
		}
	}
	return false
}
