package e2ekube

import (
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// perNodeScenario is one pool of two pods testing each other (ep-0 to
// ep-1, iperf3) with two networks, perNode written as given ("" for
// none).
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
    replicas: 2
` + perNode + `tests:
  - name: iperf3
    tool: iperf3
    from: ep
    args: {duration: 1s}
`
}

// TestPerNodeSharesANode: a pool with perNode: 2 puts its two endpoints
// on one node, as the scheduler places them (pod affinity to their node
// group), each pod attaching its own one of the pool's two networks;
// without perNode the same pool's endpoints land on two nodes, each pod
// attaching both networks (two rails).
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
		if r.code != 0 || r.rep == nil || len(r.rep.Endpoints) != 2 || len(r.rep.Results) != 1 {
			t.Fatalf("%s: exit %d", tc.ns, r.code)
		}
		a, b := r.rep.Endpoints[0], r.rep.Endpoints[1]
		if a.Node == "" || (a.Node == b.Node) != tc.oneNode {
			t.Errorf("%s: ep-0 on %q, ep-1 on %q; want one node %v", tc.ns, a.Node, b.Node, tc.oneNode)
		}
		res := r.rep.Results[0]
		if (res.SameMachine != "") != tc.oneNode || res.Verdict != schema.VerdictPass {
			t.Errorf("%s: result %s sameMachine %q; want it marked as on one node: %v", tc.ns, res.Verdict, res.SameMachine, tc.oneNode)
		}
		if tc.oneNode {
			if a.Network != "default/data-net" || b.Network != tc.ns+"/rail1" || len(a.Rails) != 0 || len(b.Rails) != 0 {
				t.Errorf("networks %s (%d rails) and %s (%d rails): want each pod its own one", a.Network, len(a.Rails), b.Network, len(b.Rails))
			}
		} else if len(a.Rails) != 2 || len(b.Rails) != 2 || !strings.HasSuffix(a.Rails[1].Network, "rail1") {
			t.Errorf("rails %+v and %+v: want both networks in each pod", a.Rails, b.Rails)
		}
		assertNothingLeft(t, c)
	}
}
