package plan

import (
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// testCompiler builds the jobs of one test; it caches what all its jobs
// share (variants, per-leg timeouts, each endpoint's environment).
type testCompiler struct {
	c        *compiler
	t        *scenarios.Test
	spec     tools.Spec
	variants []variant
	timeout  float64 // seconds, one bound for every job of the test
	reps     int
	env      []map[string]string // per endpoint, computed on first use
	envDone  []bool
	envForFn func(string) map[string]string
	strs     *tools.Strings
	scratch  []tools.Command // reused by every leg
}

// variant is what differs between the legs of one direction of a job.
type variant struct {
	name    string
	size    int64
	backend string
	// batch and tokens: one request's KV transfer (args.perRequest), its
	// descriptors per transfer and the prompt length they hold.
	batch int
	// regions are the KV regions the batch spreads over (the NIXL probe
	// lays them out as vLLM does).
	regions int
	tokens  int
}

func (c *compiler) newTestCompiler(t *scenarios.Test, spec tools.Spec) *testCompiler {
	tc := &testCompiler{c: c, t: t, spec: spec, variants: variants(t, c.s.Serving), reps: t.RepetitionCount(&c.s.Defaults),
		env: make([]map[string]string, len(c.plan.Endpoints)), envDone: make([]bool, len(c.plan.Endpoints))}
	tc.envForFn = tc.envFor
	tc.strs = c.strs
	legs := make([]time.Duration, len(tc.variants))
	for i, v := range tc.variants {
		legs[i] = tools.LegTimeout(t, v.size, v.batch)
	}
	tc.timeout = jobTimeout(c.s, t, legs)
	return tc
}

// variants: one per NIXL backend × size (args.backends, args.sizes), or
// per NIXL backend × context length of the serving section (perRequest).
func variants(t *scenarios.Test, serving *scenarios.Serving) []variant {
	if t.Args.PerRequest && serving != nil {
		return requestVariants(t, serving)
	}
	sizes := []int64{0}
	if len(t.Args.Sizes) > 0 && !t.Args.Sweep {
		sizes = sizes[:0]
		for _, s := range t.Args.Sizes {
			sizes = append(sizes, tools.SizeBytes(s))
		}
	}
	backends := t.Args.Backends
	if len(backends) == 0 {
		backends = []string{""}
	}
	out := make([]variant, 0, len(sizes)*len(backends))
	for _, b := range backends {
		for _, sz := range sizes {
			out = append(out, variant{name: variantName(b, sz), size: sz, backend: b})
		}
	}
	return out
}

// requestVariants: one request's KV transfer per backend and context
// length: blocks of the layout's block bytes, as many descriptors as the
// connector's READ carries ("UCX/8192tok").
func requestVariants(t *scenarios.Test, serving *scenarios.Serving) []variant {
	s := serving.Resolved()
	layout := s.Layout(scenarios.KVDtypeBytes(s.KVDtype))
	backends := t.Args.Backends
	if len(backends) == 0 {
		backends = []string{""}
	}
	var out []variant
	for _, b := range backends {
		for _, n := range s.ContextLengths {
			name := strconv.Itoa(n) + "tok"
			if b != "" {
				name = b + "/" + name
			}
			out = append(out, variant{name: name, size: layout.BlockBytes, backend: b, batch: layout.Descriptors(n), regions: layout.Regions * max(layout.RemoteRanks, 1), tokens: n})
		}
	}
	return out
}

func variantName(b string, size int64) string {
	var parts []string
	if b != "" {
		parts = append(parts, b)
	}
	if size > 0 {
		parts = append(parts, strconv.FormatInt(size, 10))
	}
	return strings.Join(parts, "/")
}

// round builds the r-th round of this test; global is its index in the plan.
func (tc *testCompiler) round(global, r int, slots []slot) (Round, error) {
	rd := Round{Index: global, Test: tc.t.Name, Jobs: make([]Job, 0, len(slots))}
	for j, sl := range slots {
		job, err := tc.job(rd.Index, r, j, sl)
		if err != nil {
			return rd, err
		}
		rd.Jobs = append(rd.Jobs, job)
	}
	return rd, nil
}

// job builds one job; j is its place in the round, which picks its port
// (distinct for every job of a round, as they may share a host).
func (tc *testCompiler) job(global, r, j int, sl slot) (Job, error) {
	eps := tc.c.plan.Endpoints
	from, to := tc.ends(sl)
	who := eps[from].Name + "->" + eps[to].Name
	if sl.ranks != nil {
		// A collective goes from no one to no one: its ranks (one per
		// GPU, as NCCL counts them) and its first and last endpoint name it.
		n := 0
		for _, e := range sl.ranks {
			n += max(eps[e].GPUs, 1)
		}
		who = strconv.Itoa(n) + "-ranks-" + eps[from].Name + ".." + eps[to].Name
		if from == to {
			who = strconv.Itoa(n) + "-ranks-on-" + eps[from].Name // all on one endpoint (its GPUs)
		}
		if n == 1 {
			who = "1-rank-on-" + eps[from].Name
		}
	}
	job := Job{
		ID:          tc.t.Name + "/r" + strconv.Itoa(r) + "/" + who,
		Test:        tc.t.Name,
		Tool:        tc.t.Tool,
		Pattern:     patternOf(tc.t),
		Round:       global,
		Repetitions: tc.reps,
		TimeoutSec:  tc.timeout,
	}
	port := 0
	if tc.spec.DefaultPort > 0 {
		port = tc.spec.DefaultPort + tc.c.opts.PortOffset + j
	}
	if sl.ranks != nil {
		job.Pattern = ""
		job.Legs = make([]Leg, 0, len(tc.variants))
		return tc.legs(job, sl.ranks, 0, 0, port)
	}
	job.Legs = make([]Leg, 0, len(sl.edges)*len(tc.variants))
	var err error
	for _, e := range sl.edges {
		if job, err = tc.legs(job, nil, e.from, e.to, port); err != nil {
			return job, err
		}
	}
	return job, nil
}

// ends are the endpoints a job ID names: its first leg's from and to, or
// the first and last rank of a collective.
func (tc *testCompiler) ends(sl slot) (int, int) {
	if sl.ranks != nil {
		return sl.ranks[0], sl.ranks[len(sl.ranks)-1]
	}
	return sl.edges[0].from, sl.edges[0].to
}

// legs appends one leg per variant of the direction from→to (or of the
// ranks) to job; for a tool that measures one rail per leg between
// multi-rail pods, one per variant and rail, rail i to rail i.
func (tc *testCompiler) legs(job Job, ranks []int, from, to, port int) (Job, error) {
	if ranks == nil && tools.CrossRails(tc.t) {
		return tc.crossRailLegs(job, from, to, port)
	}
	rails := 1
	if ranks == nil && tools.PerRail(tc.t.Tool) {
		eps := tc.c.plan.Endpoints
		rails = tools.Rails(eps[from], eps[to])
	}
	var err error
	for rail := 0; rail < rails && err == nil; rail++ {
		job, err = tc.railLegs(job, ranks, from, to, port, rail)
	}
	return job, err
}

// crossRailLegs appends, per variant, one leg from each rail of from to
// each rail of to (rping's crossRails): the any-to-any matrix of the two
// endpoints' NICs, rail 0 to rail 0 first.
func (tc *testCompiler) crossRailLegs(job Job, from, to, port int) (Job, error) {
	eps := tc.c.plan.Endpoints
	var err error
	for i := 0; i < tools.RailsOf(eps[from]) && err == nil; i++ {
		for j := 0; j < tools.RailsOf(eps[to]) && err == nil; j++ {
			job, err = tc.railPairLegs(job, nil, from, to, port, i, &j)
		}
	}
	return job, err
}

// railFactor is how many legs one direction of a pair has per variant:
// its rail pairs (crossRails), its rails (a tool measuring one rail per
// leg), else 1; read from the first endpoint of the test's from and to
// pools (a pool's pods share their networks).
func (tc *testCompiler) railFactor() int {
	if tc.spec.Collective {
		return 1
	}
	a, b := -1, -1
	for i, ep := range tc.c.plan.Endpoints {
		if a < 0 && ep.Pool == tc.t.From {
			a = i
		}
		if b < 0 && ep.Pool == toPool(tc.t) {
			b = i
		}
	}
	if a < 0 || b < 0 {
		return 1
	}
	eps := tc.c.plan.Endpoints
	switch {
	case tools.CrossRails(tc.t):
		return tools.RailsOf(eps[a]) * tools.RailsOf(eps[b])
	case tools.PerRail(tc.t.Tool):
		return tools.Rails(eps[a], eps[b])
	}
	return 1
}

// railLegs appends the legs of one rail (0: the data network).
func (tc *testCompiler) railLegs(job Job, ranks []int, from, to, port, rail int) (Job, error) {
	return tc.railPairLegs(job, ranks, from, to, port, rail, nil)
}

// railPairLegs appends the legs from rail of from to peer of to (nil:
// the same rail).
func (tc *testCompiler) railPairLegs(job Job, ranks []int, from, to, port, rail int, peer *int) (Job, error) {
	eps := tc.c.plan.Endpoints
	for _, v := range tc.variants {
		in := tools.Leg{Test: tc.t, Size: v.size, Batch: v.batch, Regions: v.regions, Backend: v.backend, Port: port, EnvFor: tc.envForFn, Strings: tc.strs, Rail: rail}
		leg := Leg{Variant: railVariant(rail, v.name), Rail: rail, Backend: tc.legBackend(v), RequestTokens: v.tokens}
		if peer != nil {
			p := *peer
			in.CrossRail, in.PeerRail = true, p
			leg.PeerRail, leg.Variant = &p, crossRailVariant(rail, p, v.name)
		}
		if tools.NeedsEtcd(tc.t) {
			in.Group = groupName(job.ID) + "-" + strconv.Itoa(len(job.Legs))
			leg.NixlGroup = tools.NixlGroup(in.Group)
		}
		if ranks != nil {
			in.Ranks = make([]endpoint.Endpoint, len(ranks))
			leg.Ranks = make([]string, len(ranks))
			for i, r := range ranks {
				in.Ranks[i], leg.Ranks[i] = eps[r], eps[r].Name
				leg.NRanks += max(eps[r].GPUs, 1)
			}
		} else {
			in.Client, in.Server = eps[from], eps[to]
			leg.From, leg.To = eps[from].Name, eps[to].Name
		}
		cmds, err := tools.AppendCommands(tc.scratch[:0], tc.spec, in)
		if err != nil {
			return job, err
		}
		tc.scratch = cmds
		leg.Commands = make([]PlannedCommand, len(cmds))
		for i, cm := range cmds {
			leg.Commands[i] = PlannedCommand{Endpoint: cm.Endpoint, Role: cm.Role, Argv: cm.Argv,
				Env: tc.commandEnv(cm), Port: cm.Port, Ready: cm.Ready, Parse: cm.Parse, SSH: cm.SSH}
		}
		job.Legs = append(job.Legs, leg)
	}
	return job, nil
}

// railVariant names a variant on rail i ("rail1/65536"); rail 0's keeps
// its name.
func railVariant(rail int, name string) string {
	if rail == 0 {
		return name
	}
	if name == "" {
		return "rail" + strconv.Itoa(rail)
	}
	return "rail" + strconv.Itoa(rail) + "/" + name
}

// crossRailVariant names a cross-rail leg's variant ("rail0>rail1",
// "rail1>rail0/64"): the from endpoint's rail, then the to endpoint's.
func crossRailVariant(rail, peer int, name string) string {
	v := "rail" + strconv.Itoa(rail) + ">rail" + strconv.Itoa(peer)
	if name != "" {
		v += "/" + name
	}
	return v
}

// WithoutRail is a variant without its rail ("rail1/65536" → "65536"),
// what the variant says of the leg's size and backend.
func WithoutRail(variant string) string {
	if !strings.HasPrefix(variant, "rail") {
		return variant
	}
	head, rest, _ := strings.Cut(variant, "/")
	for _, r := range strings.Split(head, ">") {
		n, ok := strings.CutPrefix(r, "rail")
		if _, err := strconv.Atoi(n); !ok || err != nil {
			return variant
		}
	}
	return rest
}

// legBackend is what Leg.Backend reports: the variant's backend
// (args.backends), else the argument the tool's description names
// (nixlbench's NIXL backend, ucx_perftest's UCX_TLS).
func (tc *testCompiler) legBackend(v variant) string {
	if v.backend != "" || tc.spec.BackendArg == "" {
		return v.backend
	}
	return tc.t.ArgText(tc.spec.BackendArg)
}

// commandEnv is a command's complete environment: scenario defaults, then
// the pool's, then the test's, then the tool's own (UCX_TLS …). Commands
// without a tool environment share their endpoint's map: treat it as
// read-only.
func (tc *testCompiler) commandEnv(cm tools.Command) map[string]string {
	base := tc.envFor(cm.Endpoint)
	if len(cm.Env) == 0 {
		return base
	}
	return mergeEnv(base, cm.Env)
}

func (tc *testCompiler) envFor(name string) map[string]string {
	i := tc.c.byName[name]
	if !tc.envDone[i] {
		tc.env[i] = mergeEnv(tc.c.plan.Endpoints[i].Env, tc.t.Env)
		tc.envDone[i] = true
	}
	return tc.env[i]
}

// groupName turns a job ID into a name safe in an etcd key and a file name:
// lower-case letters, digits and single dashes.
func groupName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
