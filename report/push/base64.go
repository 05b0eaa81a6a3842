package push

import "encoding/base64"

// base64URL encodes a grouping label value as the Pushgateway's
// name@base64/VALUE form reads it (URL-safe alphabet, "=" for empty).
func base64URL(s string) string {
	if s == "" {
		return "="
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}
