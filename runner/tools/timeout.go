package tools

import (
	"math"
	"time"

	"github.com/rdmabench/rdmabench/scenarios"
)

// Bounds used to derive a leg's default timeout. They are deliberately
// pessimistic (a slow soft-RoCE or TCP link must not be killed), but finite:
// a hung tool becomes a timeout result, not a hung run.
const (
	StartupMargin = 30 * time.Second // process start, rendezvous, teardown
	floorBytesPS  = 125e6            // assume at least 1 Gb/s of payload
	perIteration  = 100 * time.Microsecond
)

// LegTimeout is the default bound of one leg (server start to client exit)
// derived from the test's arguments; size is the leg's size (0 = default),
// batch its descriptors per transfer (nixlbench perRequest; 0 = none).
func LegTimeout(t *scenarios.Test, size int64, batch int) time.Duration {
	return (StartupMargin + LegWork(t, size, batch)).Round(time.Second)
}

// LegWork is the time the tool itself needs for one leg: the test's
// duration where it has one, else its iterations at the pessimistic floor
// rate; LegTimeout adds the start-up margin, the plan's estimate the
// harness's measured overhead.
func LegWork(t *scenarios.Test, size int64, batch int) time.Duration {
	spec, _ := Lookup(t.Tool)
	switch {
	case batch > 0: // one request's transfer, nixlbench's iterations of it
		iters := t.Args.Iterations
		if iters <= 0 {
			iters = DefaultNixlRequestIters
		}
		return nixlStepCost + transfer(float64(size)*float64(batch)*float64(2*iters))
	case spec.work != nil:
		return spec.work(&spec, t, size)
	}
	return 0
}

func transfer(bytes float64) time.Duration {
	return time.Duration(bytes / floorBytesPS * float64(time.Second))
}

// steps counts lo, lo·f, lo·f², … ≤ hi (at least 1).
func steps(lo, hi, f int64) int {
	if lo <= 0 || hi <= lo || f < 2 {
		return 1
	}
	return int(math.Floor(math.Log(float64(hi)/float64(lo))/math.Log(float64(f))+1e-9)) + 1
}
