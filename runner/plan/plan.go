package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// CompileOptions are the facts about the machines that the planner cannot
// read from the scenario; the runner fills them from discovery. Every hook
// may be nil (then: every endpoint has RDMA and every binary).
type CompileOptions struct {
	// Profile names the profile the scenario was cut to (scenarios.ProfileQuick), recorded in the plan.
	Profile string

	// HasRDMA reports whether an endpoint has a usable RDMA device. Tests
	// that need one are skipped (with the reason) when any of their
	// endpoints has none; TCP tests are still planned.
	HasRDMA func(ep endpoint.Endpoint) bool
	// HasBinary reports whether a tool's binary exists on an endpoint;
	// tests whose binary is missing are skipped with an install hint.
	HasBinary func(ep endpoint.Endpoint, binary string) bool
	// ResolveDevice names the RDMA device of an endpoint whose device is
	// unset or "auto" (NIC discovery); "" leaves it to the tool.
	ResolveDevice func(ep endpoint.Endpoint) string
	// PortOffset shifts every rendezvous port (tool default + the job's
	// place in its round), for hosts where the defaults are taken or
	// several runs share a host.
	PortOffset int
	// Platform is the Kubernetes platform the pods run on (kube
	// backend: cluster.platform, else what the backend detected); on
	// eks the fabric is EFA, whose reliable transport is SRD: tests that
	// need RC are set aside with the reason, and nixlbench takes its
	// LIBFABRIC backend unless the scenario wrote one.
	Platform string
	// SampleSeed picks the rounds of sampled all-to-all tests
	// (tests[].sample): the command line gives the day by default, so
	// that successive nights take successive blocks of the matrix.
	SampleSeed int64
	// HostGPUs counts the GPUs of the host the run is planned on, and says
	// how ("nvidia-smi -L"): a pool's gpus: all on the local backend is
	// that count (the command layer gives nic.CountGPUs: the planner
	// stays pure). nil: gpus: all is an error.
	HostGPUs func() (n int, source string)
}

// Compile turns a loaded (defaulted, validated) scenario into a plan:
// endpoints, then for each test its jobs in rounds, each job's legs with the
// exact commands, ports, readiness and timeout. It touches nothing; the
// same scenario and options always give the same plan.
func Compile(s *scenarios.Scenario, opts CompileOptions) (*Plan, error) {
	if s == nil {
		return nil, fmt.Errorf("compile: no scenario")
	}
	eps, poolIdx, err := planEndpoints(s, opts)
	if err != nil {
		return nil, err
	}
	c := &compiler{s: s, opts: opts, poolIdx: poolIdx, strs: tools.NewStrings(),
		plan: &Plan{Scenario: s.Metadata.Name, Backend: backendOf(s), Endpoints: eps, Profile: opts.Profile}}
	c.byName = make(map[string]int, len(eps))
	for i, ep := range eps {
		c.byName[ep.Name] = i
	}
	for i := range s.Tests {
		if err := c.test(i); err != nil {
			return nil, err
		}
	}
	if err := c.launcherCapabilities(); err != nil {
		return nil, err
	}
	return c.plan, nil
}

// launcherCapabilities gives the pools that host ranks of an MPI launch
// over ssh what the per-run sshd needs (tools.SSHDCapabilities), on top of
// the cluster's capabilities; other pools do without.
func (c *compiler) launcherCapabilities() error {
	need := map[string]bool{}
	for _, tp := range c.plan.tests {
		if tp.sched.n != 1 {
			continue // an MPI launch is a collective: one round of one job
		}
		r, err := tp.build(0)
		if err != nil {
			return err
		}
		for _, j := range r.Jobs {
			for _, l := range j.Legs {
				for _, pc := range l.Commands {
					if pc.SSH == nil {
						continue
					}
					for _, name := range l.Ranks {
						if i, ok := c.byName[name]; ok {
							need[c.plan.Endpoints[i].Pool] = true
						}
					}
				}
			}
		}
	}
	done := map[*endpoint.Placement]bool{}
	for _, ep := range c.plan.Endpoints {
		p := ep.Placement
		if p == nil || !need[ep.Pool] || done[p] {
			continue
		}
		done[p] = true
		for _, cp := range tools.SSHDCapabilities {
			if !slices.Contains(p.Capabilities, cp) {
				p.Capabilities = append(p.Capabilities, cp)
			}
		}
	}
	return nil
}

// platformTest is test i as the platform runs it: on EKS a tool with a
// backend for EFA (nixlbench: LIBFABRIC) drives it through that backend
// unless the scenario wrote one (a copy: the scenario stays as written).
func (c *compiler) platformTest(i int) *scenarios.Test {
	t := &c.s.Tests[i]
	spec, _ := tools.Lookup(t.Tool)
	if c.opts.Platform != scenarios.PlatformEKS || spec.EFABackend == "" || len(t.Args.Backends) > 0 ||
		c.s.Positions.Has(fmt.Sprintf("tests[%d].args.backend", i)) {
		return t
	}
	cp := *t
	cp.Args.Backend = spec.EFABackend
	return &cp
}

// compiler holds what every test of one Compile shares.
type compiler struct {
	s       *scenarios.Scenario
	opts    CompileOptions
	plan    *Plan
	poolIdx map[string][]int
	byName  map[string]int
	strs    *tools.Strings
}

func (c *compiler) test(i int) error {
	t := c.platformTest(i)
	spec, ok := tools.Lookup(t.Tool)
	if !ok {
		return posErr(c.s.File, t.Pos, "tests[%d] (%s): unknown tool %q (known: %s)", i, t.Name, t.Tool, strings.Join(tools.Names(), ", "))
	}
	p, err := c.pairing(i, t, spec)
	if err != nil {
		return err
	}
	if reason := c.skipReason(t, spec, p); reason != "" {
		c.skip(t, reason)
		return nil
	}
	var sc sched
	if spec.Collective {
		sc = listed(collective(p))
	} else if sc, err = schedule(t.Pattern, p); err != nil {
		return posErr(c.s.File, t.Pos, "tests[%d] (%s): %v", i, t.Name, err)
	}
	if t.Sample != nil && t.Pattern == scenarios.PatternAllToAll && sc.n > 0 {
		var info Sample
		sc, info = sampled(sc, t.Name, *t.Sample, c.opts.SampleSeed, allPartners(p))
		c.plan.Samples = append(c.plan.Samples, info)
	}
	if sc.n == 0 {
		c.skip(t, fmt.Sprintf("pattern %q over %s→%s forms no pair of endpoints; add replicas", patternOf(t), t.From, toPool(t)))
		return nil
	}
	tp := &testPlan{tc: c.newTestCompiler(t, spec), sched: sc, first: c.plan.NumRounds(), index: i}
	// The first round is built now: a test whose commands cannot be made
	// fails here, at its position, before anything runs (every round of a
	// test builds its commands the same way).
	if _, err := tp.build(0); err != nil {
		return posErr(c.s.File, t.Pos, "tests[%d] (%s): %v", i, t.Name, err)
	}
	c.plan.tests = append(c.plan.tests, tp)
	if tools.NeedsEtcd(t) {
		c.plan.NeedsEtcd = true
	}
	return nil
}

func (c *compiler) pairing(i int, t *scenarios.Test, spec tools.Spec) (pairing, error) {
	from, ok := c.poolIdx[t.From]
	if !ok {
		return pairing{}, posErr(c.s.File, t.Pos, "tests[%d] (%s): from: pool %q is not defined under pools:", i, t.Name, t.From)
	}
	to, ok := c.poolIdx[toPool(t)]
	if !ok {
		return pairing{}, posErr(c.s.File, t.Pos, "tests[%d] (%s): to: pool %q is not defined under pools:", i, t.Name, toPool(t))
	}
	return pairing{from: from, to: to, samePool: toPool(t) == t.From, directional: spec.Directional}, nil
}

// toPool is the test's to pool; a test without one runs within its from pool.
func toPool(t *scenarios.Test) string {
	if t.To == "" {
		return t.From
	}
	return t.To
}

func patternOf(t *scenarios.Test) string {
	if t.Pattern == "" {
		return scenarios.PatternPairwise
	}
	return t.Pattern
}

// skipReason says why a test cannot run on these endpoints, or "".
func (c *compiler) skipReason(t *scenarios.Test, spec tools.Spec, p pairing) string {
	if c.opts.Platform == scenarios.PlatformEKS && backendOf(c.s) == scenarios.BackendKube {
		if why := tools.SRDReason(t, t.Tool); why != "" {
			return "EKS with EFA: " + why
		}
	}
	rdma := tools.NeedsRDMA(t, t.Tool)
	ranks := len(p.from)
	if !p.samePool {
		ranks += len(p.to)
	}
	if rdma && spec.Collective && t.Requires == "" && c.oneHost(p) {
		rdma = false // NVLink, PCIe peer-to-peer and shared memory carry it
	}
	for _, idx := range [][]int{p.from, p.to} {
		for _, e := range idx {
			ep := c.plan.Endpoints[e]
			if rdma && c.opts.HasRDMA != nil && !c.opts.HasRDMA(ep) {
				return fmt.Sprintf("%s needs an RDMA device and endpoint %s has none (set requires: tcp for a TCP-capable tool, or run where an RDMA NIC or soft-RoCE is up)", t.Tool, ep.Name)
			}
			launcher := spec.MPI && ranks > 1 && e == idx[0] && len(p.from) > 0 && idx[0] == p.from[0]
			if bin := c.missingBinary(t, spec, ep, launcher); bin != "" {
				return fmt.Sprintf("%s is not installed on endpoint %s: %s", bin, ep.Name, tools.InstallHint(bin))
			}
		}
	}
	return ""
}

// oneHost says whether every endpoint of pairing p runs on one host: one
// endpoint, the local backend, or ssh endpoints naming the same host. Pods
// are not placed yet at plan time, so several are taken as several hosts.
func (c *compiler) oneHost(p pairing) bool {
	var eps []endpoint.Endpoint
	for _, idx := range [][]int{p.from, p.to} {
		for _, e := range idx {
			eps = append(eps, c.plan.Endpoints[e])
		}
	}
	return tools.OneHost(c.plan.Backend, eps)
}

// missingBinary is the first binary the test needs on ep that HasBinary
// says is absent; the launcher of nccl over several endpoints also needs
// mpirun.
func (c *compiler) missingBinary(t *scenarios.Test, spec tools.Spec, ep endpoint.Endpoint, launcher bool) string {
	if c.opts.HasBinary == nil {
		return ""
	}
	bins := []string{tools.ParserOf(t)}
	if launcher {
		bins = append(bins, "mpirun")
	}
	for _, b := range bins {
		if !c.opts.HasBinary(ep, b) {
			return b
		}
	}
	return ""
}

func (c *compiler) skip(t *scenarios.Test, reason string) {
	c.plan.Skipped = append(c.plan.Skipped, SkippedTest{Test: t.Name, Tool: t.Tool, Reason: reason})
}

// jobTimeout is the test's timeout, else the scenario default, else the
// longest derived leg timeout.
func jobTimeout(s *scenarios.Scenario, t *scenarios.Test, legs []time.Duration) float64 {
	for _, d := range []scenarios.Duration{t.Timeout, s.Defaults.Timeout} {
		if d.IsSet() {
			if d.Value == 0 {
				_ = d.Parse()
			}
			if d.Value > 0 {
				return d.Value.Seconds()
			}
		}
	}
	var longest time.Duration
	for _, l := range legs {
		longest = max(longest, l)
	}
	return longest.Seconds()
}
