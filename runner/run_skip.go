package runner

import (
	"time"

	"github.com/rdmabench/rdmabench/report"
)

// skipReason says whether a job cannot run here: an RDMA-only test on a
// host without RDMA devices. TCP-capable tests still run.
func (r *run) skipReason(job *Job) (bool, string) {
	if !needsRDMA(r.tests[job.Test], job.Tool) {
		return false, ""
	}
	has := r.cfg.HasRDMA
	if has == nil {
		has = DetectRDMA
	}
	if ok, why := has(); !ok {
		return true, why + "; " + job.Tool + " needs RDMA"
	}
	return false, ""
}

// anyJobRuns is false when every job will be skipped (no etcd needed).
func (r *run) anyJobRuns() bool {
	for _, round := range r.cfg.Plan.Rounds {
		for i := range round.Jobs {
			if skip, _ := r.skipReason(&round.Jobs[i]); !skip {
				return true
			}
		}
	}
	return false
}

// recordSkips records the tests the planner already set aside.
func (r *run) recordSkips() {
	for _, s := range r.cfg.Plan.Skipped {
		r.record(report.Result{
			JobID: s.Test, Test: s.Test, Tool: s.Tool, Round: -1,
			Verdict: report.VerdictSkipped, Reason: s.Reason, Started: time.Now().UTC(),
			Samples: nil,
		})
	}
}

func (r *run) skippedResult(job *Job, legIdx int, why string) report.Result {
	res := newResult(job, legIdx)
	res.Verdict, res.Reason = report.VerdictSkipped, why
	res.Started = time.Now().UTC()
	return res
}

// newResult is a result carrying the leg's identity.
func newResult(job *Job, legIdx int) report.Result {
	var leg Leg
	if legIdx < len(job.Legs) {
		leg = job.Legs[legIdx]
	}
	return report.Result{
		JobID: job.ID, Leg: legIdx, Test: job.Test, Tool: job.Tool, Pattern: job.Pattern,
		Round: job.Round, Variant: leg.Variant, Backend: leg.Backend,
		From: leg.From, To: leg.To, Ranks: leg.Ranks,
	}
}
