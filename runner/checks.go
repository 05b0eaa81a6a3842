package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/preflight"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// preflightBound bounds the facts of one endpoint (two short commands).
const preflightBound = 30 * time.Second

// Preflight reads every endpoint's facts through the backend's Exec (the
// facts script and NIC discovery) and evaluates the checks its tests need.
// An endpoint whose facts cannot be read gets an Error and dooms nothing.
// It also returns each endpoint's active RDMA MTU (0: unknown).
func Preflight(ctx context.Context, be backend.Backend, p *plan.Plan, sc *scenarios.Scenario, eps []backend.Endpoint) ([]report.PreflightEndpoint, map[string]int) {
	return PreflightOn(ctx, be, p, sc, eps, "")
}

// PreflightOn is Preflight on a platform (runner.Config.Platform): on EKS
// NCCL between nodes needs its net plugin.
func PreflightOn(ctx context.Context, be backend.Backend, p *plan.Plan, sc *scenarios.Scenario, eps []backend.Endpoint, platform string) ([]report.PreflightEndpoint, map[string]int) {
	wants := preflightWants(p, sc, eps, be.Name() == scenarios.BackendKube, platform)
	in := make([]preflight.Input, len(eps))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, ep := range eps {
		in[i].Want = wants[ep.Name]
		wg.Add(1)
		go func(i int, ep backend.Endpoint) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			in[i].Facts, in[i].Err = readFacts(ctx, be, ep, in[i].Want.Probes)
		}(i, ep)
	}
	wg.Wait()
	out := preflight.EvaluateAll(in)
	mtus := map[string]int{}
	for i, ep := range eps {
		out[i].Host, out[i].Node = ep.Host, ep.Node
		mtus[ep.Name] = preflight.ActiveMTU(in[i].Facts, ep.Device)
	}
	return out, mtus
}

func readFacts(ctx context.Context, be backend.Backend, ep backend.Endpoint, probes []tools.Probe) (preflight.Facts, error) {
	ctx, cancel := context.WithTimeout(ctx, preflightBound)
	defer cancel()
	exec := func(ctx context.Context, argv []string) ([]byte, error) { return be.Exec(ctx, ep, argv) }
	raw, err := exec(ctx, []string{"sh", "-c", preflight.FactsScript})
	if err != nil {
		return preflight.Facts{}, fmt.Errorf("reading preflight facts on %s: %w", ep.Name, err)
	}
	f := preflight.ParseFacts(string(raw))
	if len(probes) > 0 {
		out, err := exec(ctx, []string{"sh", "-c", preflight.ProbeScript(probes)})
		if err != nil {
			return f, fmt.Errorf("probing the tools on %s: %w", ep.Name, err)
		}
		f.Probes = preflight.ParseProbes(string(out))
	}
	inv, err := nic.DiscoverRemote(ctx, exec)
	if err != nil {
		return f, fmt.Errorf("NIC discovery on %s: %w", ep.Name, err)
	}
	f.Inv = inv
	return f, nil
}

// preflightWants says what each endpoint's tests need of it.
func preflightWants(p *plan.Plan, sc *scenarios.Scenario, eps []backend.Endpoint, pod bool, platform string) map[string]preflight.Want {
	tests := testsByName(sc)
	w := map[string]preflight.Want{}
	for _, ep := range eps {
		w[ep.Name] = preflight.Want{Endpoint: ep.Name, Device: ep.Device, GIDIndex: ep.GIDIndex, NoDevice: ep.NoDevice, DataDevice: ep.DataDevice, Address: ep.Address, GPUs: ep.GPUs, Pod: pod}
	}
	mark := func(name string, t *scenarios.Test, tool string) {
		x, ok := w[name]
		if !ok {
			return
		}
		rdma, gpu := tools.NeedsRDMA(t, tool), tools.NeedsGPU(t, tool)
		x.RDMA = x.RDMA || rdma
		x.GPU = x.GPU || gpu
		x.GPUDirect = x.GPUDirect || usesGPUDirect(t, rdma, gpu)
		if rdma {
			x.MinMemlockKiB = max(x.MinMemlockKiB, memlockNeedKiB(t, tool))
		}
		for _, p := range tools.ProbesOf(t, tool) {
			if !slices.ContainsFunc(x.Probes, func(q tools.Probe) bool { return q.ID == p.ID }) {
				x.Probes = append(x.Probes, p)
			}
		}
		w[name] = x
	}
	for _, round := range p.Rounds {
		for i := range round.Jobs {
			job := &round.Jobs[i]
			names := jobEndpoints(job)
			for _, name := range names {
				mark(name, tests[job.Test], job.Tool)
				if needsNCCLNet(platform, job, names) {
					x := w[name]
					x.NCCLNet = true
					w[name] = x
				}
			}
		}
	}
	for _, s := range p.Skipped { // set aside by the planner: still say why
		t := tests[s.Test]
		for _, ep := range eps {
			if t != nil && (ep.Pool == t.From || ep.Pool == t.To) {
				mark(ep.Name, t, s.Tool)
			}
		}
	}
	return w
}

// memlockNeedKiB is what a test pins (the tool table's estimate), else
// preflight's default: NCCL and NIXL pin far more than a message.
func memlockNeedKiB(t *scenarios.Test, tool string) int64 {
	if kib, ok := tools.PinnedKiB(t, tool); ok {
		return kib
	}
	return preflight.DefaultMinMemlockKiB
}

// usesGPUDirect: GPU memory moved over RDMA (perftest --use_cuda, nixlbench
// with a VRAM segment over an RDMA transport).
func usesGPUDirect(t *scenarios.Test, rdma, gpu bool) bool {
	if t == nil || !rdma {
		return false
	}
	spec, _ := tools.Lookup(t.Tool)
	return t.Args.UseCUDA != nil || (gpu && spec.Family == parsers.FamilyNixlbench)
}

// preflightSkip is the reason a job is doomed by a failed preflight check
// on one of its endpoints: "preflight rdma-device: … on server-0 (fix: …)".
func (r *run) preflightSkip(t *scenarios.Test, tool string, names []string) (bool, string) {
	if len(r.preflight) == 0 {
		return false, ""
	}
	rdma, gpu := tools.NeedsRDMA(t, tool), tools.NeedsGPU(t, tool)
	needs := preflight.Needs{RDMA: rdma, GPU: gpu, GPUDirect: usesGPUDirect(t, rdma, gpu),
		NCCLNet: r.cfg.Platform == scenarios.PlatformEKS && tool == scenarios.ToolNCCL && len(names) > 1}
	for _, p := range tools.ProbesOf(t, tool) {
		if p.Backend == "" { // a backend's own probes doom only its legs (preflightLegSkip)
			needs.Probes = append(needs.Probes, p.ID)
		}
	}
	return r.doomedOn(needs, names)
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
	return r.doomedOn(needs, names)
}

// doomedOn is the first failed check among names' that needs dooms.
func (r *run) doomedOn(needs preflight.Needs, names []string) (bool, string) {
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

// runPreflight runs the checks once the endpoints exist and keeps them for
// the skips and the report.
func (r *run) runPreflight(ctx context.Context, rep *report.Report) {
	if r.cfg.NoPreflight {
		return
	}
	rep.Preflight, r.mtus = PreflightOn(ctx, r.cfg.Backend, r.cfg.Plan, r.cfg.Scenario, r.provisioned, r.cfg.Platform)
	r.preflight = map[string]report.PreflightEndpoint{}
	for _, ep := range rep.Preflight {
		r.preflight[ep.Endpoint] = ep
		for _, c := range ep.Checks {
			if c.Status != report.PreflightPass {
				r.progress.printf("preflight %s %s on %s: %s", strings.ToUpper(c.Status), c.ID, ep.Endpoint, c.Evidence)
			}
		}
		if ep.Error != "" {
			r.progress.printf("preflight on %s: %s", ep.Endpoint, ep.Error)
		}
	}
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

// jobEndpoints lists the endpoints a job's commands run on.
func jobEndpoints(job *plan.Job) []string {
	var names []string
	for _, leg := range job.Legs {
		for _, pc := range leg.Commands {
			if !slices.Contains(names, pc.Endpoint) {
				names = append(names, pc.Endpoint)
			}
		}
	}
	return names
}

// needsNCCLNet: an NCCL job between endpoints on EKS, where EFA carries it
// only through the aws-ofi-nccl net plugin.
func needsNCCLNet(platform string, job *plan.Job, names []string) bool {
	return platform == scenarios.PlatformEKS && job.Tool == scenarios.ToolNCCL && len(names) > 1
}
