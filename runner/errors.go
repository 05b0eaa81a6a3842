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
	// SaveErr: report.json could not be written (a *SaveError).
	SaveErr error
}

// Error says how much was kept.
func (e *InterruptedError) Error() string {
	if e.SaveErr != nil {
		return fmt.Sprintf("interrupted after %d finished result(s); %v", e.Finished, e.SaveErr)
	}
	return fmt.Sprintf("interrupted after %d finished result(s); partial report written", e.Finished)
}

// Unwrap returns what cut the run short, and the save's error if any.
func (e *InterruptedError) Unwrap() []error {
	if e.SaveErr != nil {
		return []error{e.Cause, e.SaveErr}
	}
	return []error{e.Cause}
}

// SaveError is report.json that could not be written at the end of a run
// (whatever else ended it): nothing may then say the report is there.
type SaveError struct{ Err error }

func (e *SaveError) Error() string { return "save " + ReportFile + ": " + e.Err.Error() }

func (e *SaveError) Unwrap() error { return e.Err }

// ExitCode is 130, the shell's code for SIGINT.
func (e *InterruptedError) ExitCode() int { return exitcode.Interrupted }

// EmptyRunError means the run ended cleanly but measured nothing: every
// test was skipped (no RDMA device, no GPU, a failed preflight) or none
// was planned. A green exit would hide that from a nightly job: exit code
// 5, unless Config.AllowEmpty.
type EmptyRunError struct{ Skipped int }

// Error says what happened and how to accept it.
func (e *EmptyRunError) Error() string {
	return fmt.Sprintf("nothing was measured: %d result(s), all skipped (the reasons are in the summary and report.json); "+
		"exit %d so that a run with no data does not pass (--allow-empty accepts it)", e.Skipped, exitcode.NothingMeasured)
}

// ExitCode is 5.
func (e *EmptyRunError) ExitCode() int { return exitcode.NothingMeasured }
