package runner

import (
	"fmt"

	"github.com/rdmabench/rdmabench/exitcode"
)

// ShortfallError means every leg ran but some test fell short of its
// expectation: exit code 1.
type ShortfallError struct{ Failed int }

// Error says how many results fell short.
func (e *ShortfallError) Error() string {
	return fmt.Sprintf("%d result(s) fell short of their expectation", e.Failed)
}

// ExitCode is 1: a finding about the fabric, not a failure of the harness.
func (e *ShortfallError) ExitCode() int { return exitcode.Shortfall }

// HarnessError means the harness, a tool or the infrastructure failed (a
// tool missing, a server that never became ready, a timeout): exit code 3.
type HarnessError struct {
	Errors int
	Err    error
}

// Error is the cause, or how many results are errors.
func (e *HarnessError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("%d result(s) could not be measured (verdict error); see report.json", e.Errors)
}

// Unwrap returns the cause when there is one.
func (e *HarnessError) Unwrap() error { return e.Err }

// ExitCode is 3.
func (e *HarnessError) ExitCode() int { return exitcode.Harness }

// InterruptedError means the run was cut short (Ctrl-C, SIGTERM); every
// finished result is in report.json: exit code 130.
type InterruptedError struct {
	Finished int
	Cause    error
}

// Error says how much was kept.
func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted after %d finished result(s); partial report written", e.Finished)
}

// Unwrap returns what cut the run short.
func (e *InterruptedError) Unwrap() error { return e.Cause }

// ExitCode is 130, the shell's code for SIGINT.
func (e *InterruptedError) ExitCode() int { return exitcode.Interrupted }
