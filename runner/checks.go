package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/preflight"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// DefaultPreflightTimeout bounds the reading of one endpoint's facts (one
// exec: PreflightOptions.Timeout).
const DefaultPreflightTimeout = 30 * time.Second

// PreflightOptions tune PreflightOn.
type PreflightOptions struct {
	// Platform is runner.Config.Platform: on EKS NCCL between nodes needs
	// its net plugin.
	Platform string
	// Timeout bounds each endpoint's (and container's) reading; 0:
	// DefaultPreflightTimeout. Raise it where starting a command in a pod
	// is slow (emulated nodes, an API server far away).
	Timeout time.Duration
}

// Preflight reads every endpoint's facts through the backend's Exec (the
// facts script and NIC discovery) and evaluates the checks its tests need.
// An endpoint whose facts cannot be read gets an Error and dooms nothing.
// It also returns each endpoint's active RDMA MTU (0: unknown).
func Preflight(ctx context.Context, be backend.Backend, p *plan.Plan, sc *scenarios.Scenario, eps []endpoint.Endpoint) ([]report.PreflightEndpoint, map[string]int) {
	return PreflightOn(ctx, be, p, sc, eps, PreflightOptions{})
}

// PreflightOn is Preflight with options: the platform, the bound.
//
// In a pod of several containers (cluster.images) the facts and the tool
// probes are read in each container the endpoint's tests run in, since
// each has its own files and devices; a check carries its container, and
// a failure there names the image and the key that picks it.
func PreflightOn(ctx context.Context, be backend.Backend, p *plan.Plan, sc *scenarios.Scenario, eps []endpoint.Endpoint, o PreflightOptions) ([]report.PreflightEndpoint, map[string]int) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultPreflightTimeout
	}
	units := preflightUnits(p, sc, eps, runsInPods(be), o.Platform)
	in := make([]preflight.Input, len(units))
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
	evaluated := preflight.EvaluateAll(in)
	out := make([]report.PreflightEndpoint, len(eps))
	at := map[string]int{}
	for i, ep := range eps {
		out[i] = report.PreflightEndpoint{Endpoint: ep.Name, Device: ep.Device, Host: ep.Host, Node: ep.Node}
		at[ep.Name] = i
	}
	mtus := map[string]int{}
	for i, u := range units {
		e, got := &out[at[u.ep.Name]], evaluated[i]
		if u.ep.Container == "" {
			e.Device = got.Device
			mtus[u.ep.Name] = preflight.ActiveMTU(in[i].Facts, u.ep.Device)
		} else if got.Device != "" && u.want.Device != "" {
			e.Device = got.Device
		}
		if got.Error != "" {
			e.Error = joinErr(e.Error, u.label()+got.Error)
		}
		for k, v := range libraryVersions(in[i].Facts) {
			if u.ep.Container != "" {
				k += " (" + u.ep.Container + ")"
			}
			if e.Versions == nil {
				e.Versions = map[string]string{}
			}
			e.Versions[k] = v
		}
		for _, c := range got.Checks {
			e.Checks = append(e.Checks, u.locate(c))
		}
	}
	return out, mtus
}

// libraryVersions are the fingerprint's library versions among the facts.
func libraryVersions(f preflight.Facts) map[string]string {
	out := map[string]string{}
	for k, v := range map[string]string{report.FingerprintUCX: f.UCXVersion, report.FingerprintNCCL: f.NCCLVersion} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// noteLibraryVersions adds the first endpoint's library versions to the
// run's fingerprint (where discovery did not say them), so that compare
// warns when UCX or NCCL changed between two runs, and says where the
// endpoints disagree among themselves: two UCX versions in one run is a
// result of its own.
func (r *run) noteLibraryVersions(rep *report.Report) {
	seen := map[string]map[string][]string{} // key → version → endpoints
	for _, ep := range rep.Preflight {
		for k, v := range ep.Versions {
			if seen[k] == nil {
				seen[k] = map[string][]string{}
			}
			seen[k][v] = append(seen[k][v], ep.Endpoint)
		}
	}
	if len(rep.Preflight) > 0 && len(rep.Preflight[0].Versions) > 0 {
		fp := maps.Clone(r.cfg.Fingerprint) // the caller's map stays as given
		if fp == nil {
			fp = map[string]string{}
		}
		for k, v := range rep.Preflight[0].Versions {
			if _, known := fp[k]; !known {
				fp[k] = v
			}
		}
		r.cfg.Fingerprint, rep.Run.Fingerprint = fp, fp
	}
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if len(seen[k]) < 2 {
			continue
		}
		var parts []string
		for _, v := range slices.Sorted(maps.Keys(seen[k])) {
			parts = append(parts, fmt.Sprintf("%s on %s", v, briefList(seen[k][v])))
		}
		r.progress.printf("preflight WARN %s differs between endpoints: %s", k, strings.Join(parts, "; "))
	}
}

// briefList names up to three endpoints, then how many more.
func briefList(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// preflightUnit is one container of an endpoint that preflight reads
// (the endpoint itself outside pods): what its tests there need.
type preflightUnit struct {
	ep   endpoint.Endpoint // Container set: where the facts are read
	want preflight.Want
	// families are the image families whose tools run here, by probe id
	// (for the fix: which key picks the image).
	families map[string]string
	// image of the container; "" outside pods of several containers.
	image string
}

// label prefixes what was seen in a container of several: "image X
// (container nixl): ".
func (u *preflightUnit) label() string {
	if u.image == "" {
		return ""
	}
	return fmt.Sprintf("image %s (container %s): ", u.image, containerName(u.ep.Container))
}

// locate gives a check its container, and a failure the image it is
// about and the key that names the image.
func (u *preflightUnit) locate(c report.PreflightCheck) report.PreflightCheck {
	c.Container = u.ep.Container
	if c.Status == report.PreflightPass || u.image == "" {
		return c
	}
	c.Evidence = u.label() + c.Evidence
	if c.Dooms == report.DoomsTool {
		if f := u.families[c.ID]; f != "" {
			c.Fix = joinFix(c.Fix, fmt.Sprintf("or set cluster.images.%s (or the pool's images.%s) to an image that has it", f, f))
		} else {
			c.Fix = joinFix(c.Fix, "the tools image (cluster.image, make image) should have it")
		}
	}
	return c
}

func containerName(c string) string {
	if c == "" {
		return endpoint.ToolsContainer
	}
	return c
}

func joinFix(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func readFacts(ctx context.Context, be backend.Backend, ep endpoint.Endpoint, probes []tools.Probe, bound time.Duration) (preflight.Facts, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	raw, err := be.Exec(ctx, ep, []string{"sh", "-c", preflight.ReadScript(probes)})
	if err != nil {
		if ctx.Err() != nil {
			return preflight.Facts{}, fmt.Errorf("reading preflight facts on %s: no answer within %v (--preflight-timeout): %w", ep.Name, bound, err)
		}
		return preflight.Facts{}, fmt.Errorf("reading preflight facts on %s: %w", ep.Name, err)
	}
	out := preflight.SplitRead(string(raw))
	if !out.Complete {
		return preflight.Facts{}, fmt.Errorf("reading preflight facts on %s: the output ended early (%d bytes)", ep.Name, len(raw))
	}
	f := preflight.ParseFacts(out.Facts)
	if len(probes) > 0 {
		f.Probes = preflight.ParseProbes(out.Probes)
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

// preflightUnits say what each endpoint's tests need of it, per container
// they run in: the tools container (the endpoint itself outside pods)
// always, then each further container its tests use.
func preflightUnits(p *plan.Plan, sc *scenarios.Scenario, eps []endpoint.Endpoint, pod bool, platform string) []*preflightUnit {
	tests := testsByName(sc)
	var units []*preflightUnit
	byKey := map[string]*preflightUnit{}
	epByName := map[string]endpoint.Endpoint{}
	unit := func(ep endpoint.Endpoint, container string) *preflightUnit {
		key := ep.Name + "\x00" + container
		if u, ok := byKey[key]; ok {
			return u
		}
		ep.Container = container
		w := preflight.Want{Endpoint: ep.Name, Device: ep.Device, GIDIndex: ep.GIDIndex, NoDevice: ep.NoDevice, DataDevice: ep.DataDevice, Address: ep.Address, GPUs: ep.GPUs, Pod: pod}
		u := &preflightUnit{ep: ep, families: map[string]string{}}
		if c, ok := ep.Placement.ContainerNamed(container); ok { // a pod of several containers
			u.image = c.Image
			if !c.RDMA { // not given the RDMA device: its tests move no RDMA traffic
				w.Device, w.NoDevice, w.DataDevice = "", "", ""
			}
			if !c.GPU {
				w.GPUs = 0
			}
		}
		u.want = w
		byKey[key] = u
		units = append(units, u)
		return u
	}
	for _, ep := range eps {
		epByName[ep.Name] = ep
		unit(ep, "")
	}
	mark := func(name string, t *scenarios.Test, tool string, ncclNet bool) {
		ep, ok := epByName[name]
		if !ok {
			return
		}
		family := scenarios.ImageFamily(tool)
		u := unit(ep, ep.Placement.ContainerOf(family))
		x := u.want
		rdma, gpu := tools.NeedsRDMA(t, tool), tools.NeedsGPU(t, tool)
		x.RDMA = x.RDMA || rdma
		x.GPU = x.GPU || gpu
		x.GPUDirect = x.GPUDirect || usesGPUDirect(t, rdma, gpu)
		x.NCCLNet = x.NCCLNet || ncclNet
		if rdma {
			x.MinMemlockKiB = max(x.MinMemlockKiB, memlockNeedKiB(t, tool))
		}
		for _, p := range tools.ProbesOf(t, tool) {
			if !slices.ContainsFunc(x.Probes, func(q tools.Probe) bool { return q.ID == p.ID }) {
				x.Probes = append(x.Probes, p)
				u.families[p.ID] = family
			}
		}
		u.want = x
	}
	_ = p.EachRound(func(round *plan.Round) error {
		for i := range round.Jobs {
			job := &round.Jobs[i]
			names := jobEndpoints(job)
			for _, name := range names {
				mark(name, tests[job.Test], job.Tool, needsNCCLNet(platform, job, names))
			}
		}
		return nil
	})
	for _, s := range p.Skipped { // set aside by the planner: still say why
		t := tests[s.Test]
		for _, ep := range eps {
			if t != nil && (ep.Pool == t.From || ep.Pool == t.To) {
				mark(ep.Name, t, s.Tool, false)
			}
		}
	}
	return units
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
	return r.doomedOn(needs, names, tool)
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

// doomedOn is the first failed check among names' that needs dooms, in
// the container each runs tool in.
func (r *run) doomedOn(needs preflight.Needs, names []string, tool string) (bool, string) {
	for _, name := range names {
		ep, ok := r.preflight[name]
		if !ok {
			continue
		}
		needs.Container = r.endpoint(name).Placement.ContainerOf(scenarios.ImageFamily(tool))
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
	rep.Preflight, r.mtus = PreflightOn(ctx, r.cfg.Backend, r.cfg.Plan, r.cfg.Scenario, r.provisioned,
		PreflightOptions{Platform: r.cfg.Platform, Timeout: r.cfg.PreflightTimeout})
	r.noteLibraryVersions(rep)
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
