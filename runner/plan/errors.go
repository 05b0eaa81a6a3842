package plan

import (
	"fmt"

	"github.com/rdmabench/rdmabench/exitcode"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Error is a scenario the planner cannot turn into a plan (an unknown
// pool or pattern the loader let through, a host missing for ssh). It is the
// user's to fix, so the CLI exits 2.
type Error struct{ Msg string }

// Error is the message, already prefixed with FILE:LINE:COL where known.
func (e *Error) Error() string { return e.Msg }

// ExitCode makes a plan error a usage error.
func (e *Error) ExitCode() int { return exitcode.Usage }

// posErr formats a plan error with the scenario file and position when known.
func posErr(file string, pos scenarios.Pos, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	switch {
	case file != "" && pos.Line > 0:
		msg = fmt.Sprintf("%s:%d:%d: %s", file, pos.Line, pos.Col, msg)
	case file != "":
		msg = file + ": " + msg
	}
	return &Error{Msg: msg}
}
