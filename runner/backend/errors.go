package backend

import "fmt"

// MissingBinaryError is returned by Start when the command's program is not
// installed on the endpoint. Backends know nothing of tools, so it carries
// only the binary name; the runner adds how to install it.
type MissingBinaryError struct {
	Binary   string
	Endpoint string
	Err      error
}

// Error names the binary and where it was looked for.
func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("%s: %s not found in PATH", e.Endpoint, e.Binary)
}

// Unwrap returns the lookup error.
func (e *MissingBinaryError) Unwrap() error { return e.Err }
