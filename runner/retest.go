package runner

import (
	"context"
	"fmt"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// lowPairRule resolves a test's expect.lowPair for the analysis: the
// expectation as a bandwidth where of: expectation.
func lowPairRule(t *scenarios.Test, lineRate *schema.LineRate) schema.LowPairRule {
	l := t.Expect.LowPair
	rule := schema.LowPairRule{BelowPct: l.Below.Value, Of: l.Reference(), Retests: l.RetestCount()}
	if rule.Of == scenarios.LowPairOfExpectation {
		rule.ExpectBps = t.Expect.MinBandwidth.Bps
		if t.Expect.MinLineRate.IsSet() && lineRate != nil {
			rule.ExpectBps = max(rule.ExpectBps, t.Expect.MinLineRate.Value/100*lineRate.Bps)
		}
	}
	return rule
}

// lowPairTests are the scenario's tests with expect.lowPair, in file order.
func (r *run) lowPairTests() []*scenarios.Test {
	var out []*scenarios.Test
	if sc := r.cfg.Scenario; sc != nil {
		for i := range sc.Tests {
			if sc.Tests[i].Expect.LowPair != nil {
				out = append(out, &sc.Tests[i])
			}
		}
	}
	return out
}

// retestLowPairs runs, after the matrix's rounds, each low pair of every
// test with expect.lowPair again (rule.Retests times, one leg at a time, so
// the plan's ports are free); the results carry Retest = 1, 2 … The pairs
// come from the matrix's results, so the plan stays pure.
func (r *run) retestLowPairs(ctx context.Context) {
	for _, t := range r.lowPairTests() {
		rule := lowPairRule(t, r.cfg.LineRate)
		r.mu.Lock()
		results := append([]schema.Result(nil), r.results...)
		r.mu.Unlock()
		low := schema.LowPairs(results, t.Name, rule)
		if len(low) == 0 || rule.Retests == 0 {
			continue
		}
		r.progress.printf("%s: retesting %d low pair(s) %d time(s)", t.Name, len(low), rule.Retests)
		legs := r.legsOf(t.Name, low) // one pass over the test's rounds, not one per pair
		for n := 1; n <= rule.Retests; n++ {
			for _, p := range low {
				for _, jl := range legs[p] {
					if ctx.Err() != nil {
						return
					}
					again := *jl.job
					again.ID = fmt.Sprintf("%s/retest-%d", jl.job.ID, n) // its own raw/ folder
					res, ok := r.runLeg(ctx, &again, jl.leg)
					if !ok {
						return
					}
					res.JobID, res.Retest = jl.job.ID, n
					r.record(res)
				}
			}
		}
	}
}

type jobLeg struct {
	job *plan.Job
	leg int
}

// legsOf finds the planned legs of test between each of pairs (from, to;
// every size and backend), in one pass over the test's rounds: a round
// of a streamed plan is built as it is walked, and at 1,024 endpoints a
// pass costs seconds.
func (r *run) legsOf(test string, pairs [][2]string) map[[2]string][]jobLeg {
	out := make(map[[2]string][]jobLeg, len(pairs))
	for _, p := range pairs {
		out[p] = nil
	}
	_ = r.cfg.Plan.EachRoundOf(test, func(round *plan.Round) error {
		for ji := range round.Jobs {
			j := &round.Jobs[ji]
			for li, l := range j.Legs {
				p := [2]string{l.From, l.To}
				if legs, ok := out[p]; ok {
					out[p] = append(legs, jobLeg{j, li})
				}
			}
		}
		return nil
	})
	return out
}

// derive fills the report's analyses before it is saved: the low pairs of
// each test with expect.lowPair, the serving setup, the waterfalls and the
// KV budget (pure functions of the results).
func (r *run) derive(rep *schema.Report) {
	for _, t := range r.lowPairTests() {
		a := schema.AnalyzeLowPairs(rep.Results, rep.Endpoints, t.Name, lowPairRule(t, r.cfg.LineRate))
		rep.LowPairs = append(rep.LowPairs, a)
	}
	if sc := r.cfg.Scenario; sc != nil && sc.Serving != nil {
		rep.Serving = ServingSetup(sc.Serving)
	}
	for _, s := range r.cfg.Plan.Samples {
		c := schema.SampleCoverage{Test: s.Test, Partners: s.Partners, Seed: s.Seed, FirstRound: s.FirstRound, Rounds: s.Rounds,
			MatrixRounds: s.MatrixRounds, PlannedPairs: s.Pairs, MatrixPairs: s.MatrixPairs, RunsToCover: s.RunsToCover}
		c.Covered(rep.Results)
		rep.Samples = append(rep.Samples, c)
	}
	schema.Derive(rep)
}

// ServingSetup is a scenario's serving section resolved for report.json.
func ServingSetup(s *scenarios.Serving) *schema.ServingSetup {
	v := s.Resolved()
	return &schema.ServingSetup{Model: v.Model, Layers: v.Layers, KVHeads: v.KVHeads, HeadDim: v.HeadDim, LatentDim: v.LatentDim,
		KVDtype: v.KVDtype, DtypeBytes: scenarios.KVDtypeBytes(v.KVDtype), ContextLengths: v.ContextLengths,
		PrefillTP: v.PrefillTP, DecodeTP: v.DecodeTP, BlockTokens: v.BlockTokens}
}
