package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
)

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

// joinReason appends a remark to a reason.
func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// usesOut reports whether a command of the leg refers to ${out}.
func usesOut(leg *Leg) bool {
	for _, pc := range leg.Commands {
		for _, a := range pc.Argv {
			if strings.Contains(a, PlaceholderOut) {
				return true
			}
		}
		for _, v := range pc.Env {
			if strings.Contains(v, PlaceholderOut) {
				return true
			}
		}
	}
	return false
}
