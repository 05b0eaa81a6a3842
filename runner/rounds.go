package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// rounds runs the rounds one after the other, the jobs of a round at once.
// The plan builds each round as it is reached, so a run holds one round's
// jobs, not the matrix's.
func (r *run) rounds(ctx context.Context) error {
	i := 0
	err := r.cfg.Plan.EachRound(func(round *plan.Round) error {
		if ctx.Err() != nil {
			return errStopRounds
		}
		r.progress.round(i, round)
		i++
		r.mu.Lock()
		for j := range round.Jobs {
			r.order[round.Jobs[j].ID] = len(r.cfg.Plan.Skipped) + len(r.order)
		}
		r.mu.Unlock()
		var wg sync.WaitGroup
		for j := range round.Jobs {
			wg.Add(1)
			go func(job *plan.Job) {
				defer wg.Done()
				defer r.recoverJob(job)
				r.runJob(ctx, job)
			}(&round.Jobs[j])
		}
		wg.Wait()
		return nil
	})
	if errors.Is(err, errStopRounds) {
		return nil
	}
	return err
}

// runJob runs the legs of a job in order; each leg's result is recorded
// the moment it ends.
func (r *run) runJob(ctx context.Context, job *plan.Job) {
	if skip, why := r.skipReason(job); skip {
		for i := range job.Legs {
			r.record(r.skippedResult(job, i, why))
		}
		return
	}
	for i := range job.Legs {
		if skip, why := railSkip(r.endpoints, job.Legs[i]); skip {
			r.record(r.skippedResult(job, i, why))
			continue
		}
		if skip, why := r.preflightLegSkip(job, i); skip {
			r.record(r.skippedResult(job, i, why))
			continue
		}
		res, ok := r.runLeg(ctx, job, i)
		if !ok {
			return // interrupted: an unfinished leg is not a result
		}
		r.record(res)
	}
}

// recoverJob turns a panic inside a job into an error result, so that a
// harness bug costs one job, not the run and its report.
func (r *run) recoverJob(job *plan.Job) {
	if p := recover(); p != nil {
		res := r.newResult(job, 0)
		res.Verdict, res.ErrorClass = schema.VerdictError, parsers.ClassToolError
		res.Reason = fmt.Sprintf("internal error in rdmabench (please report): %v", p)
		res.Started = time.Now().UTC()
		r.record(res)
	}
}
