package plan

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// allToAll is an ib_write_bw all-to-all of one size over n endpoints.
func allToAll(n int) *scenarios.Scenario {
	s := scenario([]scenarios.Pool{pool("ep", n)},
		scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "ep", Pattern: "all-to-all",
			Args: scenarios.Args{Sizes: []scenarios.Size{size("64KiB")}, QPs: 4, Iterations: 5000}})
	s.Defaults.Env = map[string]string{"UCX_LOG_LEVEL": "warn"}
	return s
}

var benchEndpoints = []int{256, 1024, 2048, 4096}

// BenchmarkCompile is what `rdmabench plan` (the summary) does: compile an
// all-to-all and count its rounds, jobs and legs, building no round but
// the first (the check of the test's commands).
//
//	go test ./runner/plan -run '^$' -bench 'Compile/' -benchtime 3x
func BenchmarkCompile(b *testing.B) {
	for _, n := range benchEndpoints {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			s := allToAll(n)
			b.ReportAllocs()
			for b.Loop() {
				p, err := Compile(s, CompileOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if tot := p.Totals(); tot.Legs != n*(n-1) {
					b.Fatalf("%d legs", tot.Legs)
				}
			}
		})
	}
}

// BenchmarkStreamRounds is what a run and `plan -o json|table` do: build
// every round of the all-to-all, every leg's command lines included, one
// round at a time. peak-heap-MB is the largest live heap seen after a
// round (sampled every 16 rounds): it grows with the endpoints, not with
// the legs.
//
//	go test ./runner/plan -run '^$' -bench 'StreamRounds/' -benchtime 1x
func BenchmarkStreamRounds(b *testing.B) {
	for _, n := range benchEndpoints {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			s := allToAll(n)
			var peak uint64
			var ms runtime.MemStats
			for b.Loop() {
				p, err := Compile(s, CompileOptions{})
				if err != nil {
					b.Fatal(err)
				}
				legs := 0
				err = p.EachRound(func(r *Round) error {
					for _, j := range r.Jobs {
						legs += len(j.Legs)
					}
					if r.Index%16 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc)
					}
					return nil
				})
				if err != nil || legs != n*(n-1) {
					b.Fatalf("%d legs: %v", legs, err)
				}
			}
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		})
	}
}
