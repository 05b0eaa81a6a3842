package scenarios

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

func (v *validator) tests() {
	if len(v.s.Tests) == 0 {
		v.errf("tests", "add at least one test: tests: [{name: bw, tool: ib_write_bw, from: a, to: b}]", "no tests are defined")
		return
	}
	seen := map[string]bool{}
	for i := range v.s.Tests {
		t := &v.s.Tests[i]
		path := fmt.Sprintf("tests[%d]", i)
		v.testName(path, t, seen)
		if !v.tool(path, t) {
			// The pools can still be checked; the rest depends on the tool.
			v.poolRef(path+".from", t.From, true)
			v.defaultedPoolRef(path, t)
			continue
		}
		v.endpoints(path, t)
		v.testSettings(path, t)
		v.args(path, t)
		v.nixlMemory(path, t)
		v.gpuCopy(path, t)
		v.expect(path, t)
	}
}

func (v *validator) testName(path string, t *Test, seen map[string]bool) {
	switch {
	case t.Name == "":
		v.errf(path+".name", "give the test a short name such as write-bw", "test name is missing")
	case len(t.Name) > 63 || !testName.MatchString(t.Name):
		v.errf(path+".name", "use letters, digits, '.', '_' and '-', at most 63 characters (it names result files)", "%q is not a valid test name", t.Name)
	case seen[t.Name]:
		v.errf(path+".name", "test names must be unique", "test %q is defined twice", t.Name)
	}
	seen[t.Name] = true
}

// tool checks the tool name; the other checks depend on it.
func (v *validator) tool(path string, t *Test) bool {
	if t.Tool == "" {
		v.errf(path+".tool", "tools are: "+strings.Join(Tools, ", "), "tool is missing")
		return false
	}
	if _, ok := tool.Lookup(t.Tool); !ok {
		v.errf(path+".tool", ToolSuggestion(t.Tool), "unknown tool %q", t.Tool)
		return false
	}
	return true
}

// endpoints checks from/to and that the pattern can pair their endpoints.
func (v *validator) endpoints(path string, t *Test) {
	from := v.poolRef(path+".from", t.From, true)
	to := v.defaultedPoolRef(path, t)
	if collective(t.Tool) {
		v.ncclRanks(path, t, from, to)
		if t.Sample != nil {
			v.keyErrf(path+".sample", "nccl runs one job whose ranks are every endpoint of from and to; remove sample",
				"sample means nothing for nccl")
		}
		return
	}
	v.sample(path, t)
	if !v.checkOneOf(path+".pattern", t.Pattern, "patterns", Patterns) || from == nil || to == nil {
		return
	}
	if msg, hint := unsatisfiable(t.Pattern, from, to); msg != "" {
		p := path + ".pattern"
		if !v.pos.Has(p) {
			msg += " (pairwise is the default pattern)"
		}
		v.errf(p, hint, "%s", msg)
	}
}

// sample checks tests[i].sample: a count of partners, on an all-to-all.
func (v *validator) sample(path string, t *Test) {
	if t.Sample == nil {
		return
	}
	p := path + ".sample"
	if *t.Sample < 1 {
		v.errf(p, "write the partners each endpoint meets per run, 1 or more, such as sample: 8; remove sample to run the whole matrix",
			"sample must be at least 1, not %d", *t.Sample)
	}
	if t.Pattern != PatternAllToAll {
		pattern := t.Pattern
		if pattern == "" {
			pattern = PatternPairwise
		}
		v.errf(p, "set pattern: all-to-all, or remove sample: a "+pattern+" test already runs each pair it has once",
			"sample picks pairs of an all-to-all matrix, not of %s", pattern)
	}
}

// poolRef checks a reference to a pool; the pool, or nil.
func (v *validator) poolRef(path, name string, required bool) *Pool {
	if name == "" {
		if required {
			v.errf(path, "name the pool the test starts from; pools are: "+strings.Join(v.poolNames(), ", "), "from is missing")
		}
		return nil
	}
	p := v.pool(name)
	if p == nil && !v.undecoded("pools") {
		v.errf(path, suggest(name, "pools", v.poolNames()), "unknown pool %q", name)
	}
	return p
}

// defaultedPoolRef checks "to", unless it was not written and took its
// value from "from": that pool has been reported already.
func (v *validator) defaultedPoolRef(path string, t *Test) *Pool {
	if !v.pos.Has(path+".to") && t.To == t.From {
		return v.pool(t.To)
	}
	return v.poolRef(path+".to", t.To, false)
}

// unsatisfiable explains why a pattern cannot pair the endpoints of two
// pools (the same pool when from == to), or returns "".
func unsatisfiable(pattern string, from, to *Pool) (msg, hint string) {
	nf, nt := from.ReplicaCount(), to.ReplicaCount()
	if nf < 1 || nt < 1 {
		return "", "" // reported on the pool
	}
	if from == to {
		if nf < 2 {
			return fmt.Sprintf("%s within pool %q needs at least 2 endpoints, and it has %s", pattern, from.Name, plural(nf, "replica")),
				fmt.Sprintf("raise pools %q replicas to 2 or more, or test between two pools with to:", from.Name)
		}
		if pattern == PatternPairwise && nf%2 != 0 {
			return fmt.Sprintf("pairwise within pool %q pairs endpoints 0-1, 2-3 …, and %s cannot all be paired", from.Name, plural(nf, "replica")),
				"use an even number of replicas, or pattern: ring or all-to-all"
		}
		return "", ""
	}
	if pattern == PatternPairwise && nf != nt {
		return fmt.Sprintf("pairwise pairs %s-i with %s-i, but %q has %s and %q has %s", from.Name, to.Name, from.Name, plural(nf, "replica"), to.Name, plural(nt, "replica")),
			"give both pools the same replicas, or use pattern: all-to-all, one-to-many or many-to-one"
	}
	return "", ""
}

// ncclRanks checks an nccl test: every endpoint of from (and to) is one
// job's ranks, so a pattern means nothing. One rank is allowed: a host with
// one GPU still checks that NCCL and nccl-tests work there (sendrecv copies
// within the GPU; all_reduce and alltoall then report a bus bandwidth of 0,
// as nccl-tests defines it for one rank).
func (v *validator) ncclRanks(path string, t *Test, _, _ *Pool) {
	if v.written(path+".pattern", t, "pattern") {
		v.keyErrf(path+".pattern", "nccl runs one job whose ranks are every endpoint of from and to; remove pattern",
			"pattern means nothing for nccl")
	}
}

// testSettings checks repetitions, timeout, env and requires.
func (v *validator) testSettings(path string, t *Test) {
	if v.written(path+".repetitions", t, "repetitions") && t.Repetitions != nil {
		v.checkMin(path+".repetitions", *t.Repetitions, 1, "repeat the test at least once")
	}
	if v.written(path+".timeout", t, "timeout") {
		v.checkDuration(path+".timeout", &t.Timeout)
	} else if t.Timeout.IsSet() {
		_ = t.Timeout.Parse() // copied from defaults.timeout, which reports its own problem
	}
	v.checkEnv(path+".env", t.Env)
	if t.Requires == "" && collective(t.Tool) {
		return // decided by placement (defaultRequires)
	}
	if !v.checkOneOf(path+".requires", t.Requires, "requirements", Requirements) {
		return
	}
	switch {
	case t.Requires == RequiresTCP && RDMAOnly(t.Tool):
		v.errf(path+".requires", t.Tool+" only runs over RDMA; remove requires", "%s cannot run without RDMA", t.Tool)
	case t.Requires == RequiresRDMA && tool.TransportsAreTCP(t.Args.Transports) && v.pos.Has(path+".requires"):
		v.errf(path+".requires", "args.transports names TCP only; set requires: tcp, or add an RDMA transport (rc, ud, dc)",
			"requires rdma contradicts args.transports %q", t.Args.Transports)
	}
}
