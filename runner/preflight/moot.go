package preflight

import (
	"maps"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// testUse is where one test's tool runs and what it needs there: enough
// to tell a failed check of the tool's build that matters from one whose
// tests another check already skips.
type testUse struct {
	needs Needs           // RDMA, GPU, GPUDirect, NCCLNet, Probes
	at    map[string]bool // the endpoints its tool runs on
}

func useOf(uses map[string]*testUse, test string) *testUse {
	u, ok := uses[test]
	if !ok {
		u = &testUse{at: map[string]bool{}}
		uses[test] = u
	}
	return u
}

func (u *testUse) add(endpoint string, n Needs) {
	u.at[endpoint] = true
	u.needs.RDMA = u.needs.RDMA || n.RDMA
	u.needs.GPU = u.needs.GPU || n.GPU
	u.needs.GPUDirect = u.needs.GPUDirect || n.GPUDirect
	u.needs.NCCLNet = u.needs.NCCLNet || n.NCCLNet
	for _, id := range n.Probes {
		if !slices.Contains(u.needs.Probes, id) {
			u.needs.Probes = append(u.needs.Probes, id)
		}
	}
}

// doomedBy is the failing check of some endpoint of the test that skips
// it: of its tool's build too where withTools, else only those that skip
// it whatever the build (no RDMA device, no GPU).
func (u *testUse) doomedBy(out []schema.PreflightEndpoint, at map[string]int, withTools bool) (schema.PreflightCheck, bool) {
	n := u.needs
	if !withTools {
		n.Probes = nil
	}
	for _, ep := range slices.Sorted(maps.Keys(u.at)) {
		if c, ok := Doomed(out[at[ep]], n); ok {
			return c, true
		}
	}
	return schema.PreflightCheck{}, false
}

// markMoot turns a failed check of a tool's build into a skip where every
// test that needs it is skipped anyway, for a check of the endpoint: the
// tool would not run, and the skip reason names that check once.
func markMoot(out []schema.PreflightEndpoint, at map[string]int, units []*preflightUnit, uses map[string]*testUse) {
	for _, u := range units {
		e := &out[at[u.ep.Name]]
		for i := range e.Checks {
			c := &e.Checks[i]
			if c.Status != schema.PreflightFail || c.Dooms != schema.DoomsTool {
				continue
			}
			if by, ok := mootBy(out, at, u.probeTests[c.ID], uses); ok {
				c.Status = schema.PreflightSkip
				c.Evidence += " (not a failure: its tests are skipped for " + by + ")"
			}
		}
	}
}

// mootBy names the checks that skip every one of tests; false when one
// of them would run (or none needs the check).
func mootBy(out []schema.PreflightEndpoint, at map[string]int, tests []string, uses map[string]*testUse) (string, bool) {
	var by []string
	for _, t := range tests {
		u, ok := uses[t]
		if !ok {
			return "", false
		}
		c, doomed := u.doomedBy(out, at, false)
		if !doomed {
			return "", false
		}
		if !slices.Contains(by, c.ID) {
			by = append(by, c.ID)
		}
	}
	return strings.Join(by, ", "), len(by) > 0
}

// Blocking says whether the checks keep from running something the
// scenario means to run here: an endpoint whose facts could not be read,
// a failing check that dooms nothing in particular, or one that dooms a
// planned test. A test the planner set aside (requires: rdma on a host
// with no RDMA device) is skipped by design: the check that says why is
// its skip reason, no failure of its own.
func Blocking(out []schema.PreflightEndpoint, p *plan.Plan, sc *scenarios.Scenario, eps []endpoint.Endpoint, be backend.Backend, platform string) bool {
	at := map[string]int{}
	for i, ep := range out {
		at[ep.Endpoint] = i
		if ep.Error != "" || slices.ContainsFunc(ep.Checks, func(c schema.PreflightCheck) bool {
			return c.Status == schema.PreflightFail && c.Dooms == ""
		}) {
			return true
		}
	}
	_, uses := preflightUnits(p, sc, eps, runsInPods(be), platform)
	for test, u := range uses {
		if slices.ContainsFunc(p.Skipped, func(s plan.SkippedTest) bool { return s.Test == test }) {
			continue
		}
		if _, doomed := u.doomedBy(out, at, true); doomed {
			return true
		}
	}
	return false
}

// markOneHost turns a failed GPU-initiated RDMA readiness check into a
// warning where every test that asked for it keeps all its ranks on one
// host: there NVSHMEM moves DeepEP's tokens over NVLink peer-to-peer and
// IBGDA is never used (measured on 4×H100 without a NIC: NVSHMEM logs
// "init failed for transport: IBGDA" and the kernels run). The verdict and
// its fix stay in the evidence, for when the ranks span hosts.
func markOneHost(out []schema.PreflightEndpoint, at map[string]int, units []*preflightUnit, uses map[string]*testUse,
	be backend.Backend, eps []endpoint.Endpoint) {
	hostOf := map[string]string{}
	for _, ep := range eps {
		hostOf[ep.Name] = ep.Node + "\x00" + ep.Host
	}
	shares := false
	if h, ok := be.(backend.HostSharer); ok {
		shares = h.SharesHost()
	}
	oneHost := func(test string) bool {
		u, ok := uses[test]
		if !ok {
			return false
		}
		if shares || len(u.at) == 1 {
			return true
		}
		if runsInPods(be) {
			return false // pods of one node see their own GPUs alone: no NVLink path between them
		}
		hosts := map[string]bool{}
		for ep := range u.at {
			h := hostOf[ep]
			if h == "\x00" { // placement unknown: it may span hosts
				return false
			}
			hosts[h] = true
		}
		return len(hosts) == 1
	}
	for _, u := range units {
		e := &out[at[u.ep.Name]]
		for i := range e.Checks {
			c := &e.Checks[i]
			tests := u.probeTests[c.ID]
			spans := func(t string) bool { return !oneHost(t) }
			if c.ID != tools.GPUInitiatedID || c.Status != schema.PreflightFail || len(tests) == 0 || slices.ContainsFunc(tests, spans) {
				continue
			}
			c.Status, c.Dooms = schema.PreflightWarn, ""
			c.Evidence += " (not needed here: every rank of " + strings.Join(tests, ", ") +
				" shares one host, where NVSHMEM moves the tokens over NVLink peer-to-peer; needed once the ranks span hosts)"
		}
	}
}
