package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/exitcode"
)

// FieldError is one problem in a scenario file, positioned so that an editor
// (or a person) can jump to it: FILE:LINE:COL: path: message (hint).
type FieldError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`

	// covers is a path whose later problems this one explains (an unknown
	// key "pool" explains a missing "pools").
	covers string
}

// Error renders the one-line form every rdmabench command prints.
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, max(e.Col, 1))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Message)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// ErrorList holds every problem found in one scenario file, so that a user
// fixes them all in one edit instead of one per run. It is a usage error:
// the CLI exits 2.
type ErrorList []*FieldError

// Error prints one problem per line, in file order.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// ExitCode tells the CLI that a bad scenario is a usage error.
func (l ErrorList) ExitCode() int { return exitcode.Usage }

// sortErrors orders problems by position (stable, so that errors at one
// position keep the order the checks found them in).
func sortErrors(l ErrorList) {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Line != l[j].Line {
			return l[i].Line < l[j].Line
		}
		return l[i].Col < l[j].Col
	})
}

// collector gathers problems of one file.
type collector struct {
	file string
	errs ErrorList
}

func (c *collector) add(p Pos, path, hint, format string, args ...any) {
	c.errs = append(c.errs, &FieldError{
		File: c.file, Line: p.Line, Col: p.Col, Path: path,
		Message: fmt.Sprintf(format, args...), Hint: hint,
	})
}

// err returns the collected problems as an error, or nil.
func (c *collector) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	sortErrors(c.errs)
	return c.errs
}
