package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// sizesUnderTest are the endpoint counts the property tests sweep: every N
// from 2 to 64, even and odd.
func sizesUnderTest() []int {
	var ns []int
	for n := 2; n <= 64; n++ {
		ns = append(ns, n)
	}
	return ns
}

func compileOne(t *testing.T, pools []scenarios.Pool, test scenarios.Test) *Plan {
	t.Helper()
	p, err := compileHeld(scenario(pools, test), CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return p
}

// orderedPairs counts every leg's (from, to) across the plan.
func orderedPairs(p *Plan) map[[2]string]int {
	seen := map[[2]string]int{}
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			for _, l := range j.Legs {
				seen[[2]string{l.From, l.To}]++
			}
		}
	}
	return seen
}

// assertDisjointRounds fails if an endpoint is in two jobs of one round.
func assertDisjointRounds(t *testing.T, p *Plan) {
	t.Helper()
	for _, r := range p.Rounds {
		busy := map[string]string{}
		for _, j := range r.Jobs {
			mine := map[string]bool{}
			for _, l := range j.Legs {
				mine[l.From], mine[l.To] = true, true
			}
			for ep := range mine {
				if other, ok := busy[ep]; ok {
					t.Fatalf("round %d: endpoint %s is in jobs %s and %s", r.Index, ep, other, j.ID)
				}
				busy[ep] = j.ID
			}
		}
	}
}

func names(pool string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", pool, i)
	}
	return out
}

func TestAllToAllOnePoolProperties(t *testing.T) {
	for _, n := range sizesUnderTest() {
		p := compileOne(t, []scenarios.Pool{pool("ep", n)},
			scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "ep", To: "ep", Pattern: "all-to-all"})
		wantRounds := n - 1
		if n%2 == 1 {
			wantRounds = n
		}
		if len(p.Rounds) != wantRounds {
			t.Fatalf("N=%d: %d rounds, want %d", n, len(p.Rounds), wantRounds)
		}
		assertDisjointRounds(t, p)
		seen := orderedPairs(p)
		eps := names("ep", n)
		for _, a := range eps {
			for _, b := range eps {
				if want := map[bool]int{true: 0, false: 1}[a == b]; seen[[2]string{a, b}] != want {
					t.Fatalf("N=%d: pair %s->%s appears %d times, want %d", n, a, b, seen[[2]string{a, b}], want)
				}
			}
		}
		if len(seen) != n*(n-1) {
			t.Fatalf("N=%d: %d distinct ordered pairs, want %d", n, len(seen), n*(n-1))
		}
	}
}

func TestAllToAllTwoPoolsProperties(t *testing.T) {
	for _, n := range sizesUnderTest() {
		for _, m := range []int{1, n / 2, n, n + 3} {
			if m == 0 {
				continue
			}
			p := compileOne(t, []scenarios.Pool{pool("decode", n), pool("prefill", m)},
				scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "decode", To: "prefill", Pattern: "all-to-all"})
			if len(p.Rounds) != max(n, m) {
				t.Fatalf("%dx%d: %d rounds, want %d", n, m, len(p.Rounds), max(n, m))
			}
			assertDisjointRounds(t, p)
			seen := orderedPairs(p)
			for _, a := range names("decode", n) {
				for _, b := range names("prefill", m) {
					if seen[[2]string{a, b}] != 1 || seen[[2]string{b, a}] != 1 {
						t.Fatalf("%dx%d: %s<->%s seen %d/%d times, want 1/1", n, m, a, b, seen[[2]string{a, b}], seen[[2]string{b, a}])
					}
				}
			}
			if len(seen) != 2*n*m {
				t.Fatalf("%dx%d: %d ordered pairs, want %d (no pair within a pool)", n, m, len(seen), 2*n*m)
			}
		}
	}
}

func TestAllToAllNixlbenchIsDirectional(t *testing.T) {
	p := compileOne(t, []scenarios.Pool{pool("decode", 3), pool("prefill", 2)},
		scenarios.Test{Name: "kv", Tool: "nixlbench", From: "decode", To: "prefill", Pattern: "all-to-all"})
	seen := orderedPairs(p)
	if len(seen) != 6 {
		t.Fatalf("%d ordered pairs, want 6 decode->prefill only: %v", len(seen), seen)
	}
	for pair := range seen {
		if pair[0][:6] != "decode" {
			t.Fatalf("reverse leg %v in a directional tool", pair)
		}
	}
}

func TestRingProperties(t *testing.T) {
	for _, n := range sizesUnderTest() {
		for _, twoPools := range []bool{false, true} {
			pools := []scenarios.Pool{pool("a", n)}
			test := scenarios.Test{Name: "ring", Tool: "ib_write_bw", From: "a", Pattern: "ring"}
			members := names("a", n)
			if twoPools {
				pools = append(pools, pool("b", n+1))
				test.To = "b"
				members = append(members, names("b", n+1)...)
			}
			p := compileOne(t, pools, test)
			total := len(members)
			if want := 2 + total%2; len(p.Rounds) != want {
				t.Fatalf("ring of %d: %d rounds, want %d", total, len(p.Rounds), want)
			}
			assertDisjointRounds(t, p)
			seen := orderedPairs(p)
			if len(seen) != total {
				t.Fatalf("ring of %d: %d edges", total, len(seen))
			}
			for i, a := range members {
				if b := members[(i+1)%total]; seen[[2]string{a, b}] != 1 {
					t.Fatalf("ring of %d: edge %s->%s missing", total, a, b)
				}
			}
		}
	}
}

func TestPairwiseAndFans(t *testing.T) {
	pools := []scenarios.Pool{pool("decode", 4), pool("prefill", 3)}
	p := compileOne(t, pools, scenarios.Test{Name: "pw", Tool: "ib_write_bw", From: "decode", To: "prefill"})
	if len(p.Rounds) != 1 || len(p.Rounds[0].Jobs) != 3 {
		t.Fatalf("pairwise 4→3: %+v", p.Rounds)
	}
	for i, j := range p.Rounds[0].Jobs {
		if l := j.Legs[0]; l.From != fmt.Sprintf("decode-%d", i) || l.To != fmt.Sprintf("prefill-%d", i) {
			t.Fatalf("pairwise job %d: %s->%s", i, l.From, l.To)
		}
	}
	assertDisjointRounds(t, p)

	in := compileOne(t, pools, scenarios.Test{Name: "in", Tool: "ib_write_bw", From: "decode", To: "prefill", Pattern: "many-to-one"})
	if len(in.Rounds) != 3 {
		t.Fatalf("many-to-one: %d rounds, want one per target (3)", len(in.Rounds))
	}
	for r, rd := range in.Rounds {
		ports := map[int]bool{}
		for _, j := range rd.Jobs {
			if j.Legs[0].To != fmt.Sprintf("prefill-%d", r) {
				t.Fatalf("many-to-one round %d: job %s not towards prefill-%d", r, j.ID, r)
			}
			srv := j.Legs[0].Commands[0]
			if ports[srv.Port] {
				t.Fatalf("many-to-one round %d: port %d used twice on one server", r, srv.Port)
			}
			ports[srv.Port] = true
		}
		if len(rd.Jobs) != 4 {
			t.Fatalf("many-to-one round %d: %d jobs, want 4", r, len(rd.Jobs))
		}
	}
	out := compileOne(t, pools, scenarios.Test{Name: "out", Tool: "ib_write_bw", From: "decode", To: "prefill", Pattern: "one-to-many"})
	if len(out.Rounds) != 4 || len(out.Rounds[0].Jobs) != 3 {
		t.Fatalf("one-to-many: %d rounds", len(out.Rounds))
	}
}

func TestPortsDistinctWithinRound(t *testing.T) {
	for _, n := range []int{2, 7, 16, 33} {
		p := compileOne(t, []scenarios.Pool{pool("ep", n)},
			scenarios.Test{Name: "a2a", Tool: "ucx_perftest", From: "ep", Pattern: "all-to-all", Requires: "tcp"})
		for _, r := range p.Rounds {
			ports := map[int]string{}
			for _, j := range r.Jobs {
				port := j.Legs[0].Commands[0].Port
				if other, dup := ports[port]; dup {
					t.Fatalf("N=%d round %d: port %d in %s and %s", n, r.Index, port, other, j.ID)
				}
				ports[port] = j.ID
			}
		}
	}
}

func TestCompileIsDeterministic(t *testing.T) {
	for _, n := range []int{2, 5, 8, 13, 64} {
		build := func() []byte {
			s := scenario([]scenarios.Pool{pool("decode", n), pool("prefill", n/2+1)},
				scenarios.Test{Name: "a", Tool: "ib_write_bw", From: "decode", Pattern: "all-to-all"},
				scenarios.Test{Name: "b", Tool: "ucx_perftest", From: "decode", To: "prefill", Pattern: "all-to-all", Args: scenarios.Args{Transports: "tcp"}},
				scenarios.Test{Name: "c", Tool: "nixlbench", From: "decode", To: "prefill", Args: scenarios.Args{Backends: []string{"UCX", "UCCL"}}},
				scenarios.Test{Name: "d", Tool: "ib_read_lat", From: "decode", Pattern: "ring"},
			)
			s.Defaults.Env = map[string]string{"B": "2", "A": "1", "C": "3"}
			p, err := compileHeld(s, CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		first := build()
		for i := 0; i < 3; i++ {
			if !bytes.Equal(first, build()) {
				t.Fatalf("N=%d: two compiles of one scenario differ", n)
			}
		}
	}
}

func TestJobIDsUniqueAndReadable(t *testing.T) {
	p := compileOne(t, []scenarios.Pool{pool("ep", 9)},
		scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "ep", Pattern: "all-to-all"})
	ids := map[string]bool{}
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			if ids[j.ID] {
				t.Fatalf("duplicate job id %s", j.ID)
			}
			ids[j.ID] = true
		}
	}
	if got := p.Rounds[2].Jobs[0].ID; got != "a2a/r2/ep-0->ep-2" {
		t.Fatalf("job id %q", got)
	}
}

// The counts a schedule gives without building its rounds (what the
// summary prints) are the counts of the rounds it builds, for every
// pattern, pool sizes even and odd, one pool and two, directional or not.
func TestScheduleCountsMatchRounds(t *testing.T) {
	patterns := []string{"", scenarios.PatternPairwise, scenarios.PatternAllToAll, scenarios.PatternRing,
		scenarios.PatternOneToMany, scenarios.PatternManyToOne}
	for _, pattern := range patterns {
		for n := 0; n <= 9; n++ {
			for _, m := range []int{-1, 0, 1, 3, 8} { // -1: within one pool
				for _, directional := range []bool{false, true} {
					from := seq(0, n)
					p := pairing{from: from, to: from, samePool: true, directional: directional}
					if m >= 0 {
						p = pairing{from: from, to: seq(n, m), directional: directional}
					}
					sc, err := schedule(pattern, p)
					if err != nil {
						t.Fatal(err)
					}
					var jobs, edges, perJob int
					for r := 0; r < sc.n; r++ {
						round := sc.at(r)
						if len(round) == 0 {
							t.Fatalf("%q n=%d m=%d: round %d is empty", pattern, n, m, r)
						}
						jobs += len(round)
						for _, sl := range round {
							edges += len(sl.edges)
							perJob = max(perJob, len(sl.edges))
						}
					}
					if sc.jobs != jobs || sc.edges != edges || (sc.n > 0 && sc.perJob != perJob) {
						t.Fatalf("%q n=%d m=%d directional=%v: counted %d jobs %d edges %d per job, built %d, %d, %d",
							pattern, n, m, directional, sc.jobs, sc.edges, sc.perJob, jobs, edges, perJob)
					}
				}
			}
		}
	}
}

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// Compiling a 4,096-endpoint all-to-all (16.8 million legs) holds its
// endpoints and one round, not its legs: the counts are exact and the
// compile allocates a few MB where the legs would take gigabytes. (Bytes
// allocated, not time: a property of the design, not of the machine.)
func TestCompileHoldsEndpointsNotLegs(t *testing.T) {
	const n = 4096
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := Compile(allToAll(n), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tot := p.Totals()
	runtime.ReadMemStats(&after)
	if tot.Rounds != n-1 || tot.Jobs != n*(n-1)/2 || tot.Legs != n*(n-1) {
		t.Fatalf("totals %+v, want %d rounds, %d jobs, %d legs", tot, n-1, n*(n-1)/2, n*(n-1))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Fatalf("compiling %d endpoints allocated %d MB; the plan should hold endpoints, not legs", n, got>>20)
	}
}
