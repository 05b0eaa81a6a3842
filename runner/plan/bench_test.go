package plan

import (
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// BenchmarkCompileAllToAll512 plans an all-to-all over 512 endpoints: 511
// rounds of 256 jobs, each with both directions (261,632 legs).
func BenchmarkCompileAllToAll512(b *testing.B) {
	s := scenario([]scenarios.Pool{pool("ep", 512)},
		scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "ep", Pattern: "all-to-all",
			Args: scenarios.Args{Sizes: []scenarios.Size{size("64KiB")}, QPs: 4, Iterations: 5000}})
	s.Defaults.Env = map[string]string{"UCX_LOG_LEVEL": "warn"}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Compile(s, CompileOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Rounds) != 511 {
			b.Fatalf("%d rounds", len(p.Rounds))
		}
	}
}
