package e2ekube

import (
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// perNodeScenario is one pool of four pods testing each other in pairs
// (ep-0 to ep-1, ep-2 to ep-3: iperf3) with two networks, perNode written
// as given ("" for none).
func perNodeScenario(ns, perNode string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-per-node
backend: kube
cluster:
  namespace: ` + ns + `
  image: rdmabench/tools:test
  networks: [default/data-net, rail1]
  cpu: 500m
  memory: 1Gi
  shmSize: 256Mi
  startupTimeout: 90s
pools:
  - name: ep
    replicas: 4
` + perNode + `tests:
  - name: iperf3
    tool: iperf3
    from: ep
    args: {duration: 1s}
`
}

// TestPerNodeSharesANode: a pool with perNode: 2 puts its four endpoints
// on two nodes two by two (ep-0 and ep-1 on one, ep-2 and ep-3 on
// another), as the scheduler places them (pod affinity to their node
// group, anti-affinity against the pool's other group), each pod of a
// node attaching its own one of the pool's two networks; without perNode
// the same pool's endpoints land on four nodes, each pod attaching both
// networks (two rails).
func TestPerNodeSharesANode(t *testing.T) {
	c := needCluster(t)
	for _, tc := range []struct {
		ns, perNode string
		oneNode     bool
	}{
		{"e2e-pernode", "    perNode: 2\n", true},
		{"e2e-spread", "", false},
	} {
		createNamespace(t, c, tc.ns)
		createNAD(t, c, tc.ns, "rail1")
		r := run(t, c, writeScenario(t, perNodeScenario(tc.ns, tc.perNode)), 3*time.Minute, nil)
		if r.code != 0 || r.rep == nil || len(r.rep.Endpoints) != 4 || len(r.rep.Results) != 2 {
			t.Fatalf("%s: exit %d", tc.ns, r.code)
		}
		eps := r.rep.Endpoints
		nodes := map[string]bool{}
		for _, ep := range eps {
			nodes[ep.Node] = true
		}
		together := eps[0].Node == eps[1].Node && eps[2].Node == eps[3].Node
		if tc.oneNode && (!together || len(nodes) != 2) || !tc.oneNode && len(nodes) != 4 || nodes[""] {
			t.Errorf("%s: nodes %s %s %s %s; want two by two: %v", tc.ns, eps[0].Node, eps[1].Node, eps[2].Node, eps[3].Node, tc.oneNode)
		}
		for _, res := range r.rep.Results {
			if (res.SameMachine != "") != tc.oneNode || res.Verdict != schema.VerdictPass {
				t.Errorf("%s: %s->%s %s sameMachine %q; want it marked as on one node: %v", tc.ns, res.From, res.To, res.Verdict, res.SameMachine, tc.oneNode)
			}
		}
		for i, ep := range eps {
			switch want := []string{"default/data-net", tc.ns + "/rail1"}[i%2]; {
			case tc.oneNode && (ep.Network != want || len(ep.Rails) != 0):
				t.Errorf("%s on %s with %d rails: want %s alone, its own", ep.Name, ep.Network, len(ep.Rails), want)
			case !tc.oneNode && (len(ep.Rails) != 2 || !strings.HasSuffix(ep.Rails[1].Network, "rail1")):
				t.Errorf("%s rails %+v: want both networks", ep.Name, ep.Rails)
			}
		}
		assertNothingLeft(t, c)
	}
}
