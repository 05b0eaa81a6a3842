package plan

import (
	"github.com/rdmabench/rdmabench/scenarios"
)

func intp(n int) *int { return &n }

func pool(name string, n int) scenarios.Pool {
	return scenarios.Pool{Name: name, Replicas: intp(n)}
}

func size(raw string) scenarios.Size {
	s := scenarios.Size{Raw: raw}
	if err := s.Parse(); err != nil {
		panic(err)
	}
	return s
}

func dur(raw string) scenarios.Duration {
	d := scenarios.Duration{Raw: raw}
	if err := d.Parse(); err != nil {
		panic(err)
	}
	return d
}

// scenario builds a local scenario with the given pools and tests.
func scenario(pools []scenarios.Pool, tests ...scenarios.Test) *scenarios.Scenario {
	return &scenarios.Scenario{
		APIVersion: scenarios.APIVersion, Kind: scenarios.Kind,
		Metadata: scenarios.Metadata{Name: "t"},
		Backend:  scenarios.BackendLocal,
		Pools:    pools,
		Tests:    tests,
	}
}

// compileHeld compiles and then builds every round into Rounds, for tests
// that look at the rounds as a slice (the streamed plan is checked against
// the goldens, which predate streaming, byte for byte).
func compileHeld(s *scenarios.Scenario, opts CompileOptions) (*Plan, error) {
	p, err := Compile(s, opts)
	if err != nil {
		return nil, err
	}
	return p, p.Hold()
}
