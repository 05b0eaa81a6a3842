package tools

import (
	"math"
	"strings"
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
	nixlStepCost  = 20 * time.Second // etcd barriers and messages per (block, batch) step
)

// MetricOf refines a tool's headline metric by the test's arguments
// (ucx_perftest *_lat tests measure latency).
func MetricOf(t *scenarios.Test) Metric {
	spec, _ := Lookup(t.Tool)
	if spec.Family == FamilyUCX && strings.Contains(ucxTest(t.Args.Test), "lat") {
		return MetricLatency
	}
	return spec.Metric
}

// LegTimeout is the default bound of one leg (server start to client exit)
// derived from the test's arguments; size is the leg's size (0 = default).
func LegTimeout(t *scenarios.Test, size int64) time.Duration {
	spec, _ := Lookup(t.Tool)
	a := &t.Args
	var work time.Duration
	switch spec.Family {
	case FamilyPerftest:
		work = perftestWork(spec, a, size)
	case FamilyRping:
		work = time.Duration(max(a.Count, DefaultPings)) * 100 * time.Millisecond
	case FamilyNixlbench:
		work = nixlWork(t, size)
	case FamilyNCCL:
		work = ncclWork(t, size)
	case FamilyUCX:
		n := ucxIterations(a.Iterations)
		work = transfer(float64(n)*float64(max(size, 8))) + time.Duration(n)*perIteration/10
	case FamilyIperf3:
		secs := durationSecs(a.Duration)
		if secs == 0 {
			secs = DefaultIperf3Secs
		}
		work = time.Duration(secs) * time.Second
	}
	return (StartupMargin + work).Round(time.Second)
}

func transfer(bytes float64) time.Duration {
	return time.Duration(bytes / floorBytesPS * float64(time.Second))
}

func perftestWork(spec Spec, a *scenarios.Args, size int64) time.Duration {
	if secs := durationSecs(a.Duration); secs > 0 {
		return time.Duration(secs) * time.Second
	}
	iters := a.Iterations
	if iters <= 0 {
		iters = 1000
		if spec.Name == scenarios.ToolIBWriteBW {
			iters = 5000
		}
	}
	bytes := float64(size)
	switch {
	case a.Sweep:
		bytes = 2 * (8 << 20) // 2 + 4 + … + 8 MiB
	case size <= 0 && spec.Metric == MetricBandwidth:
		bytes = 65536
	case size <= 0:
		bytes = 2
	}
	n := float64(iters) * float64(max(a.QPs, 1))
	rounds := 1
	if a.Sweep {
		rounds = 23
	}
	return transfer(n*bytes) + time.Duration(iters*rounds)*perIteration
}

func nixlWork(t *scenarios.Test, size int64) time.Duration {
	minB, maxB := nixlBlocks(&Leg{Test: t, Size: size})
	iters := t.Args.Iterations
	if iters <= 0 {
		iters = 1000
	}
	batches := steps(1, int64(max(t.Args.MaxBatch, 1)), 2)
	var bytes float64
	for b := minB; b <= maxB && b > 0; b *= 2 {
		n := float64(iters)
		if b > 1<<20 {
			n /= 16
		}
		bytes += float64(b) * n * float64(int64(1)<<(batches-1)) * 2
	}
	blocks := steps(minB, maxB, 2)
	return time.Duration(blocks*batches)*nixlStepCost + transfer(bytes)
}

func ncclWork(t *scenarios.Test, size int64) time.Duration {
	a := &t.Args
	minB, maxB := SizeBytes(a.MinSize), SizeBytes(a.MaxSize)
	if size > 0 {
		minB, maxB = size, size
	}
	if minB <= 0 {
		minB = DefaultNCCLMinBytes
	}
	if maxB <= 0 {
		maxB = max(int64(DefaultNCCLMaxBytes), minB)
	}
	f := int64(max(a.StepFactor, DefaultNCCLStepFactor))
	iters := max(a.Iterations, 20) + 2 // timed + warm-up + check
	var bytes float64
	for b := minB; b <= maxB && b > 0; b *= f {
		bytes += float64(b) * float64(iters) * 2
	}
	// GPUs move data far faster than the 1 Gb/s floor; count 1 GB/s.
	return time.Duration(steps(minB, maxB, f))*time.Second + transfer(bytes/8)
}

// steps counts lo, lo·f, lo·f², … ≤ hi (at least 1).
func steps(lo, hi, f int64) int {
	if lo <= 0 || hi <= lo || f < 2 {
		return 1
	}
	return int(math.Floor(math.Log(float64(hi)/float64(lo))/math.Log(float64(f))+1e-9)) + 1
}
