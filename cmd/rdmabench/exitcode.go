package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rdmabench/rdmabench/exitcode"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Exit codes: the exitcode package's (documented in docs/reference/exit-codes.md).
const (
	exitOK          = exitcode.OK
	exitShortfall   = exitcode.Shortfall
	exitUsage       = exitcode.Usage
	exitHarness     = exitcode.Harness
	exitInterrupted = exitcode.Interrupted
)

// exitCoder is implemented by library errors that know their exit code
// (scenario errors: 2, shortfalls: 1, interruptions: 130).
type exitCoder interface{ ExitCode() int }

// usageError marks bad flags or arguments.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }
func (e usageError) ExitCode() int { return exitUsage }

// exitCodeFor is the one place that maps an error to an exit code.
func exitCodeFor(err error) int {
	if err == nil {
		return exitOK
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	return exitHarness
}

// run executes the CLI and returns the process exit code.
func run(args []string) int {
	return runWith(args, os.Stdin, os.Stdout, os.Stderr)
}

func runWith(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		var silent interface{ Silent() bool }
		var problems scenarios.ErrorList
		var planErr *plan.Error
		switch {
		case errors.As(err, &silent) && silent.Silent():
		case errors.As(err, &problems):
			// Each line starts with FILE:LINE:COL, as editors and
			// validate print them: no "rdmabench:" before the first.
			fmt.Fprintln(stderr, problems)
		case errors.As(err, &planErr):
			fmt.Fprintln(stderr, planErr)
		default:
			fmt.Fprintln(stderr, "rdmabench:", err)
		}
	}
	return exitCodeFor(err)
}
