package preflight

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// DefaultTimeout bounds the reading of one endpoint's facts (one
// exec: Options.Timeout).
const DefaultTimeout = 30 * time.Second

// Options tune RunWith.
type Options struct {
	// Platform is runner.Config.Platform: on EKS NCCL between nodes needs
	// its net plugin.
	Platform string
	// Timeout bounds each endpoint's (and container's) reading; 0:
	// DefaultTimeout. Raise it where starting a command in a pod
	// is slow (emulated nodes, an API server far away).
	Timeout time.Duration
}

// Run reads every endpoint's facts through the backend's Exec (the
// facts script and NIC discovery) and evaluates the checks its tests need.
// An endpoint whose facts cannot be read gets an Error and dooms nothing,
// but for what its spec says: a pod made without IPC_LOCK (unreadIPCLock).
// It also returns each endpoint's active RDMA MTU (0: unknown).
func Run(ctx context.Context, be backend.Backend, p *plan.Plan, sc *scenarios.Scenario, eps []endpoint.Endpoint) ([]schema.PreflightEndpoint, map[string]int) {
	return RunWith(ctx, be, p, sc, eps, Options{})
}

// RunWith is Run with options: the platform, the bound.
//
// In a pod of several containers (cluster.images) the facts and the tool
// probes are read in each container the endpoint's tests run in, since
// each has its own files and devices; a check carries its container, and
// a failure there names the image and the key that picks it.
func RunWith(ctx context.Context, be backend.Backend, p *plan.Plan, sc *scenarios.Scenario, eps []endpoint.Endpoint, o Options) ([]schema.PreflightEndpoint, map[string]int) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	units, uses := preflightUnits(p, sc, eps, runsInPods(be), o.Platform)
	in := make([]Input, len(units))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range units {
		in[i].Want = units[i].want
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			in[i].Facts, in[i].Err = readFacts(ctx, be, units[i].ep, in[i].Want.Probes, o.Timeout)
		}(i)
	}
	wg.Wait()
	evaluated := EvaluateAll(in)
	out := make([]schema.PreflightEndpoint, len(eps))
	at := map[string]int{}
	for i, ep := range eps {
		out[i] = schema.PreflightEndpoint{Endpoint: ep.Name, Device: ep.Device, Host: ep.Host, Node: ep.Node}
		at[ep.Name] = i
	}
	mtus := map[string]int{}
	for i, u := range units {
		e, got := &out[at[u.ep.Name]], evaluated[i]
		e.Device = got.Device
		mtus[u.ep.Name] = ActiveMTU(in[i].Facts, u.ep.Device)
		if got.Error != "" {
			e.Error = joinErr(e.Error, got.Error)
		}
		for k, v := range libraryVersions(in[i].Facts) {
			if e.Versions == nil {
				e.Versions = map[string]string{}
			}
			e.Versions[k] = v
		}
		e.Checks = append(e.Checks, got.Checks...)
	}
	markOneHost(out, at, units, uses, be, eps)
	markMoot(out, at, units, uses)
	return out, mtus
}

// libraryVersions are the fingerprint's library versions among the facts.
func libraryVersions(f Facts) map[string]string {
	out := map[string]string{}
	for k, v := range map[string]string{schema.FingerprintUCX: f.UCXVersion, schema.FingerprintNCCL: f.NCCLVersion} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// preflightUnit is an endpoint that preflight reads (in a pod, its one
// container): what its tests need of it.
type preflightUnit struct {
	ep   endpoint.Endpoint
	want Want
	// probeTests are the tests that need each probe here, by probe id.
	probeTests map[string][]string
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func readFacts(ctx context.Context, be backend.Backend, ep endpoint.Endpoint, probes []tools.Probe, bound time.Duration) (Facts, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	raw, err := be.Exec(ctx, ep, []string{"sh", "-c", ReadScript(probes)})
	if err != nil {
		if ctx.Err() != nil {
			return Facts{}, fmt.Errorf("reading preflight facts on %s: no answer within %v (--preflight-timeout): %w", ep.Name, bound, err)
		}
		return Facts{}, fmt.Errorf("reading preflight facts on %s: %w", ep.Name, err)
	}
	out := SplitRead(string(raw))
	if !out.Complete {
		return Facts{}, fmt.Errorf("reading preflight facts on %s: the output ended early (%d bytes)", ep.Name, len(raw))
	}
	f := ParseFacts(out.Facts)
	if len(probes) > 0 {
		f.Probes = ParseProbes(out.Probes)
	}
	inv, err := nic.DiscoverDump([]byte(out.Sysfs), []byte(out.Topo))
	if err != nil {
		return f, fmt.Errorf("NIC discovery on %s: %w", ep.Name, err)
	}
	f.Inv = inv
	return f, nil
}

// runsInPods says whether a backend's endpoints are pods
// (backend.PodRunner).
func runsInPods(be backend.Backend) bool {
	p, ok := be.(backend.PodRunner)
	return ok && p.RunsInPods()
}

// hostGPUs is the GPUs the endpoints of one host ask for in all: on the
// local backend, where two or more have GPUs, whether or not they fit the
// host (endpoint.VisibleGPUs set: each its own; else they share GPU 0 up,
// which gpu-count says); 0 elsewhere.
func hostGPUs(sc *scenarios.Scenario, eps []endpoint.Endpoint) int {
	if sc != nil && sc.Backend != "" && sc.Backend != scenarios.BackendLocal {
		return 0
	}
	total, with := 0, 0
	for _, ep := range eps {
		if ep.GPUs > 0 {
			total += ep.GPUs
			with++
		}
	}
	if with < 2 {
		return 0
	}
	return total
}

// preflightUnits say what each endpoint's tests need of it (in a pod:
// of its one container, where they all run).
func preflightUnits(p *plan.Plan, sc *scenarios.Scenario, eps []endpoint.Endpoint, pod bool, platform string) ([]*preflightUnit, map[string]*testUse) {
	tests := testsByName(sc)
	var units []*preflightUnit
	uses := map[string]*testUse{}
	byKey := map[string]*preflightUnit{}
	epByName := map[string]endpoint.Endpoint{}
	shared := hostGPUs(sc, eps)
	unit := func(ep endpoint.Endpoint) *preflightUnit {
		if u, ok := byKey[ep.Name]; ok {
			return u
		}
		w := Want{Endpoint: ep.Name, Device: ep.Device, GIDIndex: ep.GIDIndex, NoDevice: ep.NoDevice, DataDevice: ep.DataDevice, Address: ep.Address, GPUs: ep.GPUs, Pod: pod}
		if pod {
			w.SpecNoIPCLock = specNoIPCLock(sc, ep)
		}
		if ep.GPUs > 0 {
			w.HostGPUs = shared
		}
		u := &preflightUnit{ep: ep, want: w, probeTests: map[string][]string{}}
		byKey[ep.Name] = u
		units = append(units, u)
		return u
	}
	for _, ep := range eps {
		epByName[ep.Name] = ep
		unit(ep)
	}
	mark := func(name, test string, t *scenarios.Test, tool string, ncclNet bool, launch []tools.Probe) {
		ep, ok := epByName[name]
		if !ok {
			return
		}
		u := unit(ep)
		x := u.want
		rdma, gpu := tools.NeedsRDMA(t, tool), tools.NeedsGPU(t, tool)
		useOf(uses, test).add(name, Needs{RDMA: rdma, GPU: gpu, GPUDirect: UsesGPUDirect(t, rdma, gpu), NCCLNet: ncclNet, Probes: slices.Collect(commonProbeIDs(t, tool))})
		x.RDMA = x.RDMA || rdma
		x.GPU = x.GPU || gpu
		x.GPUDirect = x.GPUDirect || UsesGPUDirect(t, rdma, gpu)
		x.NCCLNet = x.NCCLNet || ncclNet
		if rdma {
			x.MinMemlockKiB = max(x.MinMemlockKiB, memlockNeedKiB(t, tool))
		}
		for _, p := range slices.Concat(tools.ProbesOf(t, tool), launch) {
			if p.Backend == "" && !slices.Contains(u.probeTests[p.ID], test) {
				u.probeTests[p.ID] = append(u.probeTests[p.ID], test)
			}
			if !slices.ContainsFunc(x.Probes, func(q tools.Probe) bool { return q.ID == p.ID }) {
				x.Probes = append(x.Probes, p)
			}
		}
		u.want = x
	}
	_ = p.EachRound(func(round *plan.Round) error {
		for i := range round.Jobs {
			job := &round.Jobs[i]
			names := job.Endpoints()
			var jobEps []endpoint.Endpoint
			for _, name := range names {
				jobEps = append(jobEps, epByName[name])
			}
			launch := tools.LaunchProbes(job.Tool, p.Backend, jobEps)
			for _, name := range names {
				mark(name, job.Test, tests[job.Test], job.Tool, needsNCCLNet(platform, job, names), launch)
			}
		}
		return nil
	})
	for _, s := range p.Skipped { // set aside by the planner: still say why
		t := tests[s.Test]
		for _, ep := range eps {
			if t != nil && (ep.Pool == t.From || ep.Pool == t.To) {
				mark(ep.Name, s.Test, t, s.Tool, false, nil)
			}
		}
	}
	return units, uses
}

// testsByName indexes the scenario's tests (nil: none).
func testsByName(sc *scenarios.Scenario) map[string]*scenarios.Test {
	m := map[string]*scenarios.Test{}
	if sc != nil {
		for i := range sc.Tests {
			m[sc.Tests[i].Name] = &sc.Tests[i]
		}
	}
	return m
}

// memlockNeedKiB is what a test pins (the tool table's estimate), else
// preflight's default: NCCL and NIXL pin far more than a message.
func memlockNeedKiB(t *scenarios.Test, tool string) int64 {
	if kib, ok := tools.PinnedKiB(t, tool); ok {
		return kib
	}
	return DefaultMinMemlockKiB
}

// UsesGPUDirect says whether GPU memory moves over RDMA (perftest --use_cuda, nixlbench
// with a VRAM segment over an RDMA transport).
func UsesGPUDirect(t *scenarios.Test, rdma, gpu bool) bool {
	if t == nil || !rdma {
		return false
	}
	spec, _ := tools.Lookup(t.Tool)
	return gpu && spec.GPUMemoryOverRDMA
}

// needsNCCLNet: an NCCL job between endpoints on EKS, where EFA carries it
// only through the aws-ofi-nccl net plugin.
func needsNCCLNet(platform string, job *plan.Job, names []string) bool {
	return platform == scenarios.PlatformEKS && tool.UsesNCCL(job.Tool) && len(names) > 1
}

// commonProbeIDs are the ids of a test's probes that every leg needs (a
// NIXL backend's own probes doom only its legs).
func commonProbeIDs(t *scenarios.Test, tool string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, p := range tools.ProbesOf(t, tool) {
			if p.Backend == "" && !yield(p.ID) {
				return
			}
		}
	}
}
