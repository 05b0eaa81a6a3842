package runner

import (
	"context"
	"time"

	"github.com/rdmabench/rdmabench/report"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// runLeg runs a leg Job.Repetitions times and judges the whole. It returns
// false when the run was interrupted before the leg finished.
func (r *run) runLeg(ctx context.Context, job *plan.Job, legIdx int) (report.Result, bool) {
	res := newResult(job, legIdx)
	res.Started = time.Now().UTC()
	reps := max(1, job.Repetitions)
	outs := make([]judge.Outcome, 0, reps)
	proof := r.newLegProof(job, legIdx)
	proof.start(ctx)
	for rep := 0; rep < reps; rep++ {
		r.progress.start(job, legIdx, rep, reps)
		o := r.runRep(ctx, job, legIdx, rep)
		if o.Interrupted || ctx.Err() != nil {
			return res, false
		}
		outs = append(outs, o)
	}
	judge.Fill(&res, r.tests[job.Test], r.cfg.LineRate, outs)
	proof.finish(ctx, &res, outs)
	r.noteVersion(job.Tool, outs)
	return res, true
}

// noteVersion keeps the version a tool reported, for RunMeta.ToolVersions.
func (r *run) noteVersion(tool string, outs []judge.Outcome) {
	for _, o := range outs {
		if o.OK && o.M.Version != "" {
			r.mu.Lock()
			if r.versions == nil {
				r.versions = map[string]string{}
			}
			r.versions[tool] = o.M.Version
			r.mu.Unlock()
			return
		}
	}
}
