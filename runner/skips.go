package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/preflight"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"

	"github.com/rdmabench/rdmabench/report/schema"
)

// skipReason says whether a job cannot run here: an RDMA-only test where
// an endpoint has no RDMA device. TCP-capable tests still run. The planner
// already set such tests aside; this is the runner's own check, by
// Config.HasRDMA, else the backend's, else (backend.HostSharer) this
// host's devices.
func (r *run) skipReason(job *plan.Job) (bool, string) {
	if skip, why := r.preflightSkip(r.tests[job.Test], job.Tool, job.Endpoints()); skip {
		return true, why
	}
	if skip, why := r.gpuSkipReason(job); skip {
		return true, why
	}
	if !tools.NeedsRDMA(r.tests[job.Test], job.Tool) {
		return false, ""
	}
	if has := r.cfg.HasRDMA; has != nil {
		if ok, why := has(); !ok {
			return true, why + "; " + job.Tool + " needs RDMA"
		}
		return false, ""
	}
	if c, ok := r.cfg.Backend.(backend.RDMAChecker); ok {
		for _, name := range job.Endpoints() {
			ep := r.endpoint(name)
			if !c.HasRDMA(context.Background(), ep) {
				why := "endpoint " + name + " has no RDMA device"
				if ep.NoDevice != "" {
					why += " for its data interface: " + ep.NoDevice
				}
				return true, why + "; " + job.Tool + " needs RDMA"
			}
		}
		return false, ""
	}
	if sharesHost(r.cfg.Backend) {
		if ok, why := DetectRDMA(); !ok {
			return true, why + "; " + job.Tool + " needs RDMA"
		}
	}
	return false, ""
}

// anyJobRuns is false when every job will be skipped (no etcd needed).
func (r *run) anyJobRuns() bool {
	runs := false
	_ = r.cfg.Plan.EachRound(func(round *plan.Round) error {
		for i := range round.Jobs {
			if skip, _ := r.skipReason(&round.Jobs[i]); !skip {
				runs = true
				return errStopRounds
			}
		}
		return nil
	})
	return runs
}

// recordSkips records the tests the planner already set aside, each
// with one reason: the failing preflight check where there is one (it
// read what the planner inferred, and carries the fix), else the
// planner's.
func (r *run) recordSkips() {
	for _, s := range r.cfg.Plan.Skipped {
		reason := s.Reason
		if skip, why := r.preflightSkip(r.tests[s.Test], s.Tool, r.poolEndpoints(r.tests[s.Test])); skip {
			reason = why
		}
		family, metric := tools.Describe(r.tests[s.Test], s.Tool)
		r.record(schema.Result{
			JobID: s.Test, Test: s.Test, Tool: s.Tool, Family: family, Metric: metric, Round: -1,
			Verdict: schema.VerdictSkipped, Reason: reason, Started: time.Now().UTC(),
			Samples: nil,
		})
	}
}

// skippedResult is a leg that did not run: what it would have run (the
// planned command lines, placeholders unfilled) and its test's op, so that
// the report sets it beside the legs of the same workload that did run.
func (r *run) skippedResult(job *plan.Job, legIdx int, why string) schema.Result {
	res := r.newResult(job, legIdx)
	res.Verdict, res.Reason = schema.VerdictSkipped, why
	res.Started = time.Now().UTC()
	if t := r.tests[job.Test]; t != nil && tool.IsKVTransfer(res.Family) {
		res.Op = strings.ToUpper(t.Args.Op)
	}
	if legIdx < len(job.Legs) {
		for _, pc := range job.Legs[legIdx].Commands {
			res.Commands = append(res.Commands, formatCommand(pc.Endpoint, pc.Env, pc.Argv))
		}
	}
	return res
}

// gpuSkipReason is the skip reason of a GPU test whose endpoint has none.
func (r *run) gpuSkipReason(job *plan.Job) (bool, string) {
	if !tools.NeedsGPU(r.tests[job.Test], job.Tool) {
		return false, ""
	}
	c, ok := r.cfg.Backend.(backend.GPUChecker)
	if !ok {
		return false, ""
	}
	for _, name := range job.Endpoints() {
		if !c.HasGPU(context.Background(), r.endpoint(name)) {
			return true, "endpoint " + name + " has no GPU; " + job.Tool + " needs GPU memory"
		}
	}
	return false, ""
}

// preflightSkip is the reason a job is doomed by a failed preflight check
// on one of its endpoints: "preflight rdma-device: … on server-0 (fix: …)".
func (r *run) preflightSkip(t *scenarios.Test, name string, names []string) (bool, string) {
	if len(r.preflight) == 0 {
		return false, ""
	}
	rdma, gpu := tools.NeedsRDMA(t, name), tools.NeedsGPU(t, name)
	needs := preflight.Needs{RDMA: rdma, GPU: gpu, GPUDirect: preflight.UsesGPUDirect(t, rdma, gpu),
		NCCLNet: r.cfg.Platform == scenarios.PlatformEKS && tool.UsesNCCL(name) && len(names) > 1}
	var eps []endpoint.Endpoint
	for _, n := range names {
		eps = append(eps, r.endpoint(n))
	}
	for _, p := range slices.Concat(tools.ProbesOf(t, name), tools.LaunchProbes(name, r.cfg.Plan.Backend, eps)) {
		if p.Backend == "" { // a backend's own probes doom only its legs (preflightLegSkip)
			needs.Probes = append(needs.Probes, p.ID)
		}
	}
	return r.doomedOn(needs, names, name)
}

// preflightLegSkip is the reason one leg of a job is doomed where the job
// is not: a probe of its NIXL backend failed (UCCL's plugin missing skips
// the UCCL legs of a backend comparison, not its UCX ones).
func (r *run) preflightLegSkip(job *plan.Job, i int) (bool, string) {
	if len(r.preflight) == 0 || i >= len(job.Legs) || job.Legs[i].Backend == "" {
		return false, ""
	}
	var needs preflight.Needs
	for _, p := range tools.ProbesOf(r.tests[job.Test], job.Tool) {
		if p.Backend != "" && strings.EqualFold(p.Backend, job.Legs[i].Backend) {
			needs.Probes = append(needs.Probes, p.ID)
		}
	}
	if len(needs.Probes) == 0 {
		return false, ""
	}
	var names []string
	for _, pc := range job.Legs[i].Commands {
		names = append(names, pc.Endpoint)
	}
	return r.doomedOn(needs, names, job.Tool)
}

// doomedOn is the first failed check among names' that needs dooms.
func (r *run) doomedOn(needs preflight.Needs, names []string, tool string) (bool, string) {
	for _, name := range names {
		ep, ok := r.preflight[name]
		if !ok {
			continue
		}
		if c, doomed := preflight.Doomed(ep, needs); doomed {
			return true, fmt.Sprintf("preflight %s: %s on %s (fix: %s)", c.ID, c.Evidence, name, c.Fix)
		}
	}
	return false, ""
}

// poolEndpoints are the endpoints of a test's pools (for a test the
// planner set aside, whose jobs were never compiled).
func (r *run) poolEndpoints(t *scenarios.Test) []string {
	var names []string
	if t == nil {
		return nil
	}
	for _, ep := range r.cfg.Plan.Endpoints {
		if ep.Pool == t.From || ep.Pool == t.To {
			names = append(names, ep.Name)
		}
	}
	return names
}

// railSkip is why a leg on a rail of multi-rail pods (plan.Leg.Rail > 0)
// cannot run: a pod without that rail, or with no RDMA device on it. It is
// skipped rather than run on the data device or without the server's
// address.
func railSkip(eps map[string]endpoint.Endpoint, leg plan.Leg) (bool, string) {
	if !leg.OnRails() {
		return false, ""
	}
	for _, pc := range leg.Commands {
		ep := eps[pc.Endpoint]
		rail := leg.RailOn(pc.Endpoint)
		if rail == 0 {
			continue
		}
		if rail >= len(ep.Rails) {
			return true, fmt.Sprintf("endpoint %s has no rail %d (its pod's networks were not all found)", ep.Name, rail)
		}
		if r := ep.Rails[rail]; r.Device == "" {
			return true, fmt.Sprintf("endpoint %s has no RDMA device on rail %d (%s %s): %s", ep.Name, rail, r.Network, r.Interface, r.NoDevice)
		}
	}
	return false, ""
}
