package plan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rdmabench/rdmabench/scenarios"
)

// edge is one directed leg: from (client/initiator) → to (server/target),
// as indices into the plan's endpoints.
type edge struct{ from, to int }

// slot is one job of a round: its directions in leg order, or (nccl) the
// ranks of a collective.
type slot struct {
	edges []edge
	ranks []int
}

// pairing is what a pattern is applied to: the endpoints of the test's
// from and to pools, and whether they are the same pool.
type pairing struct {
	from, to    []int
	samePool    bool
	directional bool // no reverse legs across pools (nixlbench)
}

// schedule turns a pattern into rounds of slots such that no endpoint is in
// two slots of one round, except where the pattern is a fan-in or fan-out
// (many-to-one, one-to-many), whose point is that one endpoint serves many
// at once. The patterns whose rounds grow with the square of the endpoints
// (all-to-all, the fans) are generated one round at a time.
func schedule(pattern string, p pairing) (sched, error) {
	switch pattern {
	case "", scenarios.PatternPairwise:
		return listed(pairwise(p)), nil
	case scenarios.PatternAllToAll:
		if p.samePool {
			return circleSched(p.from), nil
		}
		return bipartiteSched(p), nil
	case scenarios.PatternRing:
		return listed(ring(ringMembers(p))), nil
	case scenarios.PatternOneToMany:
		return fanSched(p, false), nil
	case scenarios.PatternManyToOne:
		return fanSched(p, true), nil
	}
	return sched{}, fmt.Errorf("unknown pattern %q (use pairwise, all-to-all, ring, one-to-many or many-to-one)", pattern)
}

// pairwise: from[i] → to[i] in one round. Within one pool: 0→1, 2→3, …
// (an odd last endpoint stays idle).
func pairwise(p pairing) [][]slot {
	var round []slot
	if p.samePool {
		for i := 0; i+1 < len(p.from); i += 2 {
			round = append(round, one(p.from[i], p.from[i+1]))
		}
	} else {
		for i := 0; i < min(len(p.from), len(p.to)); i++ {
			round = append(round, one(p.from[i], p.to[i]))
		}
	}
	if len(round) == 0 {
		return nil
	}
	return [][]slot{round}
}

func one(from, to int) slot { return slot{edges: []edge{{from, to}}} }

// both is a job over the pair {a, b}: a→b, then b→a.
func both(a, b int) slot { return slot{edges: []edge{{a, b}, {b, a}}} }

// circleSched schedules a round-robin tournament over one pool with the
// circle method: N−1 rounds for even N, N rounds for odd N (a phantom
// endpoint makes N even; whoever meets it sits the round out). Every
// unordered pair meets exactly once, and its job runs both directions, so
// every ordered pair appears exactly once. Round r is computed on its own.
func circleSched(eps []int) sched {
	n := len(eps)
	if n < 2 {
		return sched{}
	}
	m := n + n%2 // with a phantom for odd n
	return sched{n: m - 1, jobs: n * (n - 1) / 2, edges: n * (n - 1), perJob: 2,
		at: func(r int) []slot { return circleRound(eps, m, r) }}
}

func circleRound(eps []int, m, r int) []slot {
	n := len(eps)
	at := func(i int) int { // the endpoint at position i in round r
		if i == 0 {
			return 0
		}
		return (i-1+r)%(m-1) + 1
	}
	round := make([]slot, 0, m/2)
	for i := 0; i < m/2; i++ {
		a, b := at(i), at(m-1-i)
		if a >= n || b >= n {
			continue // the phantom's partner is idle
		}
		if a > b {
			a, b = b, a
		}
		round = append(round, both(eps[a], eps[b]))
	}
	sortSlots(round)
	return round
}

// sortSlots orders a round's jobs by their first endpoint (stable output).
func sortSlots(round []slot) {
	slices.SortFunc(round, func(x, y slot) int { return cmp.Compare(x.edges[0].from, y.edges[0].from) })
}

// bipartiteSched schedules from×to across two pools in max(|from|, |to|)
// rounds (a Latin square): in round r, the i-th endpoint of the smaller
// pool meets the (i+r)-th of the larger. Each job runs from→to, then
// to→from (unless the tool is directional), so every ordered pair across
// the pools appears exactly once.
func bipartiteSched(p pairing) sched {
	small, large := p.from, p.to
	swapped := len(small) > len(large)
	if swapped {
		small, large = large, small
	}
	if len(small) == 0 {
		return sched{}
	}
	per := 2
	if p.directional {
		per = 1
	}
	jobs := len(small) * len(large)
	return sched{n: len(large), jobs: jobs, edges: jobs * per, perJob: per, at: func(r int) []slot {
		round := make([]slot, 0, len(small))
		for i, s := range small {
			l := large[(i+r)%len(large)]
			f, t := s, l
			if swapped {
				f, t = l, s
			}
			if p.directional {
				round = append(round, one(f, t))
			} else {
				round = append(round, both(f, t))
			}
		}
		return round
	}}
}

// ringMembers is the ring's order: one pool, or the from pool followed by
// the to pool.
func ringMembers(p pairing) []int {
	if p.samePool {
		return p.from
	}
	return append(append([]int(nil), p.from...), p.to...)
}

// ring schedules edges i→i+1 (mod N), coloured so that no endpoint is in
// two jobs of a round: even N in 2 rounds (even i, odd i), odd N in 3 (the
// closing edge N−1→0 alone in the third).
func ring(eps []int) [][]slot {
	n := len(eps)
	if n < 2 {
		return nil
	}
	colours := 2 + n%2
	rounds := make([][]slot, colours)
	for i := 0; i < n; i++ {
		c := i % 2
		if n%2 == 1 && i == n-1 {
			c = 2
		}
		rounds[c] = append(rounds[c], one(eps[i], eps[(i+1)%n]))
	}
	return rounds
}

// fanSched schedules one-to-many (each from endpoint serves every to
// endpoint at once, one round per from endpoint) or many-to-one (every from
// endpoint at once towards one to endpoint, one round per to endpoint). A
// hub whose only spoke is itself has no round.
func fanSched(p pairing, in bool) sched {
	hubs, spokes := p.from, p.to
	if in {
		hubs, spokes = p.to, p.from
	}
	isSpoke := map[int]bool{}
	for _, s := range spokes {
		isSpoke[s] = true
	}
	var live []int // hubs with at least one spoke but themselves
	jobs := 0
	for _, h := range hubs {
		k := len(spokes)
		if isSpoke[h] {
			k--
		}
		if k > 0 {
			live = append(live, h)
			jobs += k
		}
	}
	return sched{n: len(live), jobs: jobs, edges: jobs, perJob: 1, at: func(r int) []slot {
		h := live[r]
		round := make([]slot, 0, len(spokes))
		for _, s := range spokes {
			if s == h {
				continue
			}
			if in {
				round = append(round, one(s, h))
			} else {
				round = append(round, one(h, s))
			}
		}
		return round
	}}
}

// collective is the one job of a multi-rank tool: every endpoint of from
// and to (once each), from first.
func collective(p pairing) [][]slot {
	ranks := append([]int(nil), p.from...)
	if !p.samePool {
		ranks = append(ranks, p.to...)
	}
	if len(ranks) == 0 {
		return nil
	}
	return [][]slot{{{ranks: ranks}}}
}
