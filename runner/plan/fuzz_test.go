package plan

import (
	"testing"

	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// FuzzCompile plans arbitrary pool sizes, patterns and tools: Compile must
// never panic, and every plan must keep rounds disjoint (outside the fan
// patterns) and name only endpoints that exist.
func FuzzCompile(f *testing.F) {
	f.Add(uint8(4), uint8(4), uint8(1), uint8(0), false)
	f.Add(uint8(7), uint8(0), uint8(2), uint8(3), true)
	f.Add(uint8(1), uint8(9), uint8(3), uint8(8), false)
	f.Fuzz(func(t *testing.T, n, m, pat, tool uint8, samePool bool) {
		patterns := []string{"", scenarios.PatternPairwise, scenarios.PatternAllToAll, scenarios.PatternRing,
			scenarios.PatternOneToMany, scenarios.PatternManyToOne}
		names := tools.Names()
		test := scenarios.Test{Name: "f", Tool: names[int(tool)%len(names)], From: "a", To: "b",
			Pattern: patterns[int(pat)%len(patterns)]}
		pools := []scenarios.Pool{pool("a", int(n%40)), pool("b", int(m%40))}
		if samePool {
			test.To = "a"
		}
		p, err := compileHeld(scenario(pools, test), CompileOptions{})
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		known := map[string]bool{}
		for _, ep := range p.Endpoints {
			known[ep.Name] = true
		}
		fan := test.Pattern == scenarios.PatternOneToMany || test.Pattern == scenarios.PatternManyToOne
		if !fan {
			assertDisjointRounds(t, p)
		}
		for _, r := range p.Rounds {
			for _, j := range r.Jobs {
				for _, l := range j.Legs {
					for _, c := range l.Commands {
						if !known[c.Endpoint] || len(c.Argv) == 0 {
							t.Fatalf("job %s: command on %q argv %q", j.ID, c.Endpoint, c.Argv)
						}
					}
					if l.From != "" && l.From == l.To {
						t.Fatalf("job %s: leg from %s to itself", j.ID, l.From)
					}
				}
			}
		}
	})
}
