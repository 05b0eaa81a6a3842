package plan

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

func sampledPlan(t *testing.T, pools []scenarios.Pool, to string, k int, seed int64) *Plan {
	t.Helper()
	test := scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: pools[0].Name, To: to, Pattern: "all-to-all", Sample: intp(k)}
	p, err := compileHeld(scenario(pools, test), CompileOptions{SampleSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// partnersPerRun counts the distinct partners each endpoint meets.
func partnersPerRun(p *Plan) map[string]map[string]bool {
	met := map[string]map[string]bool{}
	add := func(a, b string) {
		if met[a] == nil {
			met[a] = map[string]bool{}
		}
		met[a][b] = true
	}
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			for _, l := range j.Legs {
				add(l.From, l.To)
				add(l.To, l.From)
			}
		}
	}
	return met
}

// One pool, even and odd: each run gives every endpoint K partners (K−1
// for the one an odd pool's round leaves idle), the same seed gives the
// same plan, and RunsToCover consecutive seeds run every ordered pair of
// the matrix exactly as often as the rounds wrap.
func TestSampleOnePoolRotatesAndCovers(t *testing.T) {
	for _, n := range []int{10, 9, 16} {
		for _, k := range []int{1, 2, 4} {
			rounds := n - 1 + n%2
			cover := (rounds + k - 1) / k
			union := map[[2]string]bool{}
			for seed := int64(100); seed < 100+int64(cover); seed++ {
				p := sampledPlan(t, []scenarios.Pool{pool("ep", n)}, "", k, seed)
				if len(p.Rounds) != k || len(p.Samples) != 1 {
					t.Fatalf("n=%d k=%d: %d rounds, samples %+v", n, k, len(p.Rounds), p.Samples)
				}
				s := p.Samples[0]
				if s.Partners != k || s.Seed != seed || s.MatrixRounds != rounds || s.Rounds != k || s.RunsToCover != cover ||
					s.MatrixPairs != n*(n-1) || s.FirstRound != int(seed*int64(k)%int64(rounds)) {
					t.Fatalf("n=%d k=%d seed %d: sample %+v", n, k, seed, s)
				}
				pairs := orderedPairs(p)
				if len(pairs) != s.Pairs {
					t.Fatalf("n=%d k=%d: %d ordered pairs planned, sample says %d", n, k, len(pairs), s.Pairs)
				}
				for pr := range pairs {
					union[pr] = true
				}
				for ep, partners := range partnersPerRun(p) {
					if len(partners) != k && !(n%2 == 1 && len(partners) == k-1) {
						t.Fatalf("n=%d k=%d seed %d: %s meets %d partners", n, k, seed, ep, len(partners))
					}
				}
				assertDisjointRounds(t, p)
				// The job IDs name the matrix's round, not the run's.
				if id := p.Rounds[0].Jobs[0].ID; !strings.HasPrefix(id, "a2a/r"+itoa(s.FirstRound)+"/") {
					t.Fatalf("first job %s, want matrix round %d", id, s.FirstRound)
				}
			}
			if len(union) != n*(n-1) {
				t.Fatalf("n=%d k=%d: %d consecutive seeds cover %d of %d ordered pairs", n, k, cover, len(union), n*(n-1))
			}
		}
	}
}

func TestSampleSameSeedSamePlan(t *testing.T) {
	a := sampledPlan(t, []scenarios.Pool{pool("ep", 12)}, "", 3, 7)
	b := sampledPlan(t, []scenarios.Pool{pool("ep", 12)}, "", 3, 7)
	c := sampledPlan(t, []scenarios.Pool{pool("ep", 12)}, "", 3, 8)
	if a.Rounds[0].Jobs[0].ID != b.Rounds[0].Jobs[0].ID || a.Rounds[0].Jobs[0].ID == c.Rounds[0].Jobs[0].ID {
		t.Fatalf("seed 7: %s and %s; seed 8: %s", a.Rounds[0].Jobs[0].ID, b.Rounds[0].Jobs[0].ID, c.Rounds[0].Jobs[0].ID)
	}
}

// Two pools: each endpoint of the smaller meets K of the larger; K at or
// past the matrix's rounds is the whole matrix.
func TestSampleTwoPoolsAndWholeMatrix(t *testing.T) {
	p := sampledPlan(t, []scenarios.Pool{pool("decode", 3), pool("prefill", 8)}, "prefill", 2, 5)
	s := p.Samples[0]
	if len(p.Rounds) != 2 || s.MatrixRounds != 8 || s.Pairs != 2*3*2 || s.MatrixPairs != 2*3*8 || s.RunsToCover != 4 {
		t.Fatalf("%d rounds, sample %+v", len(p.Rounds), s)
	}
	for ep, partners := range partnersPerRun(p) {
		if strings.HasPrefix(ep, "decode") && len(partners) != 2 {
			t.Fatalf("%s meets %d partners, want 2", ep, len(partners))
		}
	}
	whole := sampledPlan(t, []scenarios.Pool{pool("ep", 6)}, "", 9, 3)
	if s := whole.Samples[0]; len(whole.Rounds) != 5 || s.Pairs != 30 || s.MatrixPairs != 30 || s.RunsToCover != 1 || s.FirstRound != 0 {
		t.Fatalf("sample past the matrix: %d rounds, %+v", len(whole.Rounds), s)
	}
}

// The summary's counts of a sampled test are those of the rounds it
// builds, and it says the share of the matrix.
func TestSampleSummary(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("ep", 64)},
		scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "ep", Pattern: "all-to-all", Sample: intp(4)})
	p, err := Compile(s, CompileOptions{SampleSeed: 20000})
	if err != nil {
		t.Fatal(err)
	}
	tot := p.Totals()
	rounds, err := p.AllRounds()
	if err != nil {
		t.Fatal(err)
	}
	jobs, legs := 0, 0
	for _, r := range rounds {
		jobs += len(r.Jobs)
		for _, j := range r.Jobs {
			legs += len(j.Legs)
		}
	}
	if tot.Rounds != 4 || len(rounds) != 4 || tot.Jobs != 128 || jobs != 128 || tot.Legs != 256 || legs != 256 {
		t.Fatalf("totals %+v; built %d rounds, %d jobs, %d legs", tot, len(rounds), jobs, legs)
	}
	var out strings.Builder
	if err := WriteSummary(&out, p); err != nil {
		t.Fatal(err)
	}
	want := "a2a: a sample of 4 partners per endpoint (seed 20000: 4 of the matrix's 63 rounds, from round 53): 256 of 4,032 ordered pairs (6.3% of the matrix); 16 consecutive seeds cover it"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("summary lacks %q:\n%s", want, out.String())
	}
}

func itoa(n int) string { return thousands(n) }

// A sample as large as the matrix or larger is the matrix: the plan says
// the partners an endpoint really meets, not K (it said "a sample of 100
// partners per endpoint" for 8 endpoints).
func TestSamplePartnersClaimedAreMet(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{8, 1}, {8, 7}, {8, 8}, {8, 100}, {7, 6}, {7, 7}, {7, 50}} {
		p := sampledPlan(t, []scenarios.Pool{pool("ep", tc.n)}, "", tc.k, 12345)
		most := 0
		for _, partners := range partnersPerRun(p) {
			most = max(most, len(partners))
		}
		if got := p.Samples[0].Partners; got != most {
			t.Errorf("n=%d sample=%d: plan says %d partners per endpoint; endpoints meet at most %d (%s)",
				tc.n, tc.k, got, most, SampleLine(p.Samples[0]))
		}
	}
	// Across two pools the smaller pool's endpoints meet all of the larger.
	p := sampledPlan(t, []scenarios.Pool{pool("a", 3), pool("b", 5)}, "b", 40, 1)
	if got := p.Samples[0].Partners; got != 5 {
		t.Errorf("3×5 pools, sample 40: plan says %d partners, want 5", got)
	}
}
