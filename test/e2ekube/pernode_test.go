package e2ekube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
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
// networks (two rails). Each pod requests a VF (rdma/roce_gdr) of the
// networks it attaches whose definition names that resource, its own.
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
		createResourceNAD(t, c, tc.ns, "rail1", "rdma/roce_gdr")
		runID := tc.ns + "-1"
		r := run(t, c, writeScenario(t, perNodeScenario(tc.ns, tc.perNode)), 3*time.Minute, nil, "--keep", "--run-id", runID)
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
		checkVFRequests(t, c, tc.ns, runID, tc.oneNode)
		if out, err := runCmd(t, "clean", "--kubeconfig", c.Kubeconfig, "--all", "-n", tc.ns); err != nil {
			t.Fatalf("clean: %v\n%s", err, out)
		}
		assertNothingLeft(t, c)
	}
}

// createResourceNAD makes a NetworkAttachmentDefinition whose attachments
// draw a device from resource, as the SR-IOV operator writes one.
func createResourceNAD(t *testing.T, c *cluster.Cluster, ns, name, res string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition","metadata":{"name":%q,"namespace":%q,"annotations":{%q:%q}},
  "spec":{"config":"{\"cniVersion\":\"0.3.1\",\"type\":\"bridge\",\"ipam\":{\"type\":\"host-local\"}}"}}`, name, ns, kube.NADResourceAnnotation, res)
	err := c.Client().Discovery().RESTClient().Post().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces", ns, "network-attachment-definitions").
		SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(context.Background()).Error()
	if err != nil {
		t.Fatal(err)
	}
}

// checkVFRequests: each pod requests (and is limited to) one rdma/roce_gdr
// for its attachment of rail1, whose definition names that resource, and
// none for default/data-net, which names none: with perNode the pods on
// rail1 (ep-1, ep-3) one each and the others none; without, every pod one.
func checkVFRequests(t *testing.T, c *cluster.Cluster, ns, runID string, oneNode bool) {
	t.Helper()
	pods, err := c.Client().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "rdmabench.io/run=" + runID})
	if err != nil || len(pods.Items) != 4 {
		t.Fatalf("%v: %d pods", err, len(pods.Items))
	}
	for _, p := range pods.Items {
		ep := p.Labels["rdmabench.io/endpoint"]
		want := "1"
		if oneNode && (ep == "ep-0" || ep == "ep-2") {
			want = "0"
		}
		for _, ctr := range p.Spec.Containers {
			if ctr.Name != "tools" {
				continue
			}
			lim, req := ctr.Resources.Limits["rdma/roce_gdr"], ctr.Resources.Requests["rdma/roce_gdr"]
			if lim.String() != want || req.String() != want {
				t.Errorf("%s: rdma/roce_gdr limit %s request %s; want %s", ep, lim.String(), req.String(), want)
			}
		}
	}
}
