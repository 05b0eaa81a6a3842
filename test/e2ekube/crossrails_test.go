package e2ekube

import (
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// TestCrossRailsBetweenMultiRailPods: rping crossRails between two pods
// of two networks each, on two nodes. The lane's nodes have no RDMA
// device (no rdma_rxe on the host; rping has no stand-in, being a tool
// the soft-RoCE lane runs for real), so every leg is skipped; what the
// lane proves is the pod side the planner tests cannot: each pod's two
// rails are found from its network-status, the test becomes one leg per
// rail pair (2 × 2, rail i to remote rail j), each skipped with the
// reason its rail gives, and the rail verdict is "not judged", never
// WideEP-ready on nothing measured.
func TestCrossRailsBetweenMultiRailPods(t *testing.T) {
	c := needCluster(t)
	ns := "e2e-crossrails"
	createNamespace(t, c, ns)
	createNAD(t, c, ns, "rail1")
	sc := strings.Replace(perNodeScenario(ns, ""), "    replicas: 4\n", "    replicas: 2\n", 1)
	sc = sc[:strings.Index(sc, "tests:")] + `tests:
  - name: cross-rails
    tool: rping
    from: ep
    args: {crossRails: true, count: 2}
`
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil)
	if r.code != 5 || r.rep == nil { // nothing measured: never a pass
		t.Fatalf("exit %d; want 5 (every leg skipped) and a report", r.code)
	}
	for _, ep := range r.rep.Endpoints {
		if len(ep.Rails) != 2 || ep.Rails[0].Address == "" || ep.Rails[1].Address == "" || ep.Rails[0].Address == ep.Rails[1].Address {
			t.Errorf("%s rails %+v: want two, each its own address", ep.Name, ep.Rails)
		}
	}
	pairs := map[string]bool{}
	for _, res := range r.rep.Results {
		if res.PeerRail == nil {
			t.Errorf("%s %s->%s: not a cross-rail leg", res.Test, res.From, res.To)
			continue
		}
		pairs[string(rune('0'+res.Rail))+string(rune('0'+*res.PeerRail))] = true
		if res.Verdict != schema.VerdictSkipped || res.Reason == "" {
			t.Errorf("rail %d -> %d: %s %q; want skipped with why (no RDMA device here)", res.Rail, *res.PeerRail, res.Verdict, res.Reason)
		}
	}
	if len(pairs) != 4 {
		t.Errorf("rail pairs %v: want 00, 01, 10, 11", pairs)
	}
	reach := schema.RailReachOf(r.rep)
	if len(reach) != 1 || reach[0].Verdict != schema.RailsUnjudged || reach[0].Rails != 2 || len(reach[0].Pairs) != 4 {
		t.Errorf("rail reach %+v: want 4 pairs of 2 rails, not judged", reach)
	}
	assertNothingLeft(t, c)
}
