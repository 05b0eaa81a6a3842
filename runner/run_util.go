package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
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
