package main

import (
	"context"
	"errors"
	"testing"

	"github.com/rdmabench/rdmabench/runner"
)

// An interrupted run whose report.json could not be saved says so: main
// prints the error (an interrupt alone is silent: its progress line says
// it), and its exit code stays 130.
func TestInterruptedSaveErrorIsSaid(t *testing.T) {
	in := &runner.InterruptedError{Finished: 3, Cause: context.Canceled,
		SaveErr: &runner.SaveError{Err: errors.New("no space left on device")}}
	err := quiet(in)
	var silent interface{ Silent() bool }
	if errors.As(err, &silent) && silent.Silent() {
		t.Errorf("quiet(%q) is silent: main prints nothing, and the save error is never shown", in.Error())
	}
	var coded interface{ ExitCode() int }
	if !errors.As(err, &coded) || coded.ExitCode() != 130 {
		t.Errorf("exit code: want 130 (interrupted)")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the interrupt's cause is lost: %v", err)
	}
	if err := quiet(&runner.InterruptedError{Finished: 3, Cause: context.Canceled}); !errors.As(err, &silent) || !silent.Silent() {
		t.Errorf("an interrupt with its report saved is not silent: %v", err)
	}
}
