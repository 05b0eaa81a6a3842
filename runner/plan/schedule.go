package plan

// sched is one test's rounds: how many there are, what they hold in total,
// and a function that builds round r on demand, so that a plan holds its
// endpoints and not its legs (an all-to-all over N endpoints has N² legs).
type sched struct {
	n      int // rounds
	jobs   int // jobs over every round
	edges  int // directed pairs over every round (a collective counts 1)
	perJob int // the most edges of one job: what a round's longest job runs
	at     func(r int) []slot
	orig   func(r int) int // the matrix round of round r (sampled); nil: r
}

// listed is a schedule whose rounds are already built (patterns that grow
// linearly with the endpoints: pairwise, ring, a collective).
func listed(rounds [][]slot) sched {
	s := sched{n: len(rounds), at: func(r int) []slot { return rounds[r] }}
	for _, round := range rounds {
		s.jobs += len(round)
		for _, sl := range round {
			e := len(sl.edges)
			if sl.ranks != nil {
				e = 1
			}
			s.edges += e
			s.perJob = max(s.perJob, e)
		}
	}
	return s
}

// round is the matrix round that the schedule's r-th round is (a sampled
// schedule takes some of them); job IDs name it, so that one pair keeps
// its ID from night to night.
func (s sched) round(r int) int {
	if s.orig == nil {
		return r
	}
	return s.orig(r)
}

// Sample is a sampled all-to-all (tests[].sample) as planned: which of the
// matrix's rounds this run takes. The matrix's rounds are a
// 1-factorisation (each endpoint meets one partner per round), so taking
// K rounds gives each endpoint K partners (one fewer for the endpoint a
// round of an odd pool leaves idle), and the K rounds from (seed × K) mod
// rounds on are a block that the next seed's block follows: any
// RunsToCover consecutive seeds run every pair of the matrix.
type Sample struct {
	Test         string `json:"test"`
	Partners     int    `json:"partners"`
	Seed         int64  `json:"seed"`
	FirstRound   int    `json:"firstRound"`
	Rounds       int    `json:"rounds"`
	MatrixRounds int    `json:"matrixRounds"`
	// Pairs are the ordered pairs this run measures, MatrixPairs all of
	// the matrix's.
	Pairs       int `json:"pairs"`
	MatrixPairs int `json:"matrixPairs"`
	RunsToCover int `json:"runsToCover"`
}

// sampled takes k rounds of a full all-to-all schedule, starting where
// seed says. The matrix's rounds hold the same number of jobs each (circle
// and Latin square), so the counts scale exactly.
func sampled(full sched, test string, k int, seed int64, everyPartner int) (sched, Sample) {
	n := full.n
	info := Sample{Test: test, Partners: k, Seed: seed, MatrixRounds: n, MatrixPairs: full.edges}
	if k >= n || n == 0 {
		// The whole matrix: an endpoint meets every partner it has, not K.
		info.Partners = min(k, everyPartner)
		info.Rounds, info.Pairs, info.RunsToCover = n, full.edges, 1
		return full, info
	}
	first := int(((seed%int64(n))*int64(k%n)%int64(n) + int64(n)) % int64(n))
	info.FirstRound, info.Rounds = first, k
	info.Pairs = full.edges / n * k
	info.RunsToCover = (n + k - 1) / k
	return sched{n: k, jobs: full.jobs / n * k, edges: info.Pairs, perJob: full.perJob,
		at:   func(r int) []slot { return full.at((first + r) % n) },
		orig: func(r int) int { return (first + r) % n }}, info
}

// allPartners is the most partners an endpoint of an all-to-all over p
// has: the rest of its pool, or the larger pool's size across two (the
// smaller pool's endpoints meet every one of it).
func allPartners(p pairing) int {
	if p.samePool {
		return max(len(p.from)-1, 0)
	}
	return max(len(p.from), len(p.to))
}
