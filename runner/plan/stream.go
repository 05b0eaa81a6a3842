package plan

import (
	"bytes"
	"encoding/json"
	"sync"
)

// testPlan is one compiled test: its schedule and what builds its rounds.
type testPlan struct {
	tc    *testCompiler
	sched sched
	first int // the plan-wide index of its first round
	index int // its place under tests:
	mu    sync.Mutex
}

// build makes the r-th round of the test (its plan-wide index first+r).
// The test compiler's caches are shared, hence the lock.
func (tp *testPlan) build(r int) (Round, error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.tc.round(tp.first+r, tp.sched.round(r), tp.sched.at(r))
}

// NumRounds is the number of rounds of the plan, without building them.
func (p *Plan) NumRounds() int {
	n := len(p.Rounds)
	for _, tp := range p.tests {
		n += tp.sched.n
	}
	return n
}

// EachRound calls fn with every round in order: the rounds held in Rounds,
// then each compiled test's, built one at a time (only the round being
// handled is in memory unless fn keeps it). It stops at fn's first error.
func (p *Plan) EachRound(fn func(*Round) error) error {
	for i := range p.Rounds {
		if err := fn(&p.Rounds[i]); err != nil {
			return err
		}
	}
	for _, tp := range p.tests {
		if err := tp.each(fn); err != nil {
			return err
		}
	}
	return nil
}

// EachRoundOf is EachRound restricted to the rounds of one test.
func (p *Plan) EachRoundOf(test string, fn func(*Round) error) error {
	for i := range p.Rounds {
		if p.Rounds[i].Test == test {
			if err := fn(&p.Rounds[i]); err != nil {
				return err
			}
		}
	}
	for _, tp := range p.tests {
		if tp.tc.t.Name == test {
			if err := tp.each(fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func (tp *testPlan) each(fn func(*Round) error) error {
	for r := 0; r < tp.sched.n; r++ {
		rd, err := tp.build(r)
		if err != nil {
			return err
		}
		if err := fn(&rd); err != nil {
			return err
		}
	}
	return nil
}

// AllRounds builds every round at once: for tests and small plans only
// (a large all-to-all does not fit in memory this way; use EachRound).
func (p *Plan) AllRounds() ([]Round, error) {
	out := make([]Round, 0, p.NumRounds())
	err := p.EachRound(func(r *Round) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// MarshalJSON is WriteJSON's document (every round built): json.Marshal
// of a plan gives what plan.json holds.
func (p *Plan) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a plan back, its rounds into Rounds.
func (p *Plan) UnmarshalJSON(data []byte) error {
	type plain Plan
	var doc struct {
		*plain
		Rounds []Round `json:"rounds"`
	}
	doc.plain = (*plain)(p)
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	p.Rounds, p.tests = doc.Rounds, nil
	return nil
}

// Hold builds every round into Rounds, so that they can be read or edited
// as a slice: for tests and small plans (see AllRounds).
func (p *Plan) Hold() error {
	rounds, err := p.AllRounds()
	if err != nil {
		return err
	}
	p.Rounds, p.tests = rounds, nil
	return nil
}
