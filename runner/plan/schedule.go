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
