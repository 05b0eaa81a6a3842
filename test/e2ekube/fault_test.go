package e2ekube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// Faults at scale, the lane's small case of each: an all-to-all of 8 pods
// packed two to a node on 4 nodes of their own, a 2 s iperf3 per pair (7
// rounds of 4 pairs, both directions), and something lost in round 2.

// faultScenario is that matrix in namespace ns on the nodes labelled
// rdmabench.test/fault=label. The anti-affinity key is one no node has,
// so pods of the pool may share nodes (as many endpoints per node as a
// GPU node has NICs).
func faultScenario(ns, label string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-faults
backend: kube
cluster:
  namespace: ` + ns + `
  image: rdmabench/tools:test
  networks: [default/data-net]
  nodeSelector: {rdmabench.test/fault: ` + label + `}
  antiAffinity: rdmabench.test/no-such-key
  startupTimeout: 90s
pools:
  - name: ep
    replicas: 8
tests:
  - name: a2a
    tool: iperf3
    from: ep
    pattern: all-to-all
    timeout: 30s
    args: {duration: 2s}
`
}

// faultNodes adds n nodes labelled rdmabench.test/fault=label for one
// test, removed (or, stopped, deleted) when it ends.
func faultNodes(t *testing.T, c *cluster.Cluster, label string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var names []string
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s-%d", label, i)
		if err := c.AddNode(ctx, name, map[string]string{"rdmabench.test/fault": label}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.RemoveNode(ctx, name); err != nil && !strings.Contains(err.Error(), "no node") {
				t.Errorf("remove node %s: %v", name, err)
			}
			_ = c.DeleteNode(ctx, name)
		})
	}
	return names
}

// podsOf maps the run's pods (by endpoint name) to their nodes, from the
// API: read when the first round starts.
func podsOf(t *testing.T, c *cluster.Cluster, ns string) (pods map[string]string, endpoint map[string]string) {
	t.Helper()
	list, err := c.Client().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=rdmabench"})
	if err != nil {
		t.Fatal(err)
	}
	pods, endpoint = map[string]string{}, map[string]string{}
	for _, p := range list.Items {
		pods[p.Name] = p.Spec.NodeName
		endpoint[p.Name] = p.Labels["rdmabench.io/endpoint"]
	}
	return pods, endpoint
}

// faultVerdicts checks the run's report after a fault that hit the
// endpoints in lost: every one of the 56 legs is in report.json; a leg
// between two endpoints that were not lost passes; a leg that touches one
// is an error whose reason satisfies names, or (a round before the fault)
// a pass. It returns how many legs ended as errors.
func faultVerdicts(t *testing.T, r result, lost map[string]bool, names func(reason string) bool) int {
	t.Helper()
	if r.rep == nil {
		t.Fatalf("exit %d: no report.json", r.code)
	}
	if len(r.rep.Results) != 56 {
		t.Errorf("%d results in report.json, want all 56 legs of the matrix", len(r.rep.Results))
	}
	errs := 0
	for _, res := range r.rep.Results {
		touched := lost[res.From] || lost[res.To]
		switch {
		case !touched && res.Verdict != schema.VerdictPass:
			t.Errorf("%s->%s (neither lost): %s %q; the other pairs must carry on", res.From, res.To, res.Verdict, res.Reason)
		case touched && res.Verdict == schema.VerdictError:
			errs++
			if !names(res.Reason) {
				t.Errorf("%s->%s: reason %q does not say what was lost", res.From, res.To, res.Reason)
			}
		case touched && res.Verdict != schema.VerdictPass:
			t.Errorf("%s->%s: %s %q, want an error (or a pass before the fault)", res.From, res.To, res.Verdict, res.Reason)
		}
	}
	if errs == 0 {
		t.Error("no leg ended as an error: the fault came too late to be seen")
	}
	if r.code != 3 {
		t.Errorf("exit %d, want 3 (legs in error)", r.code)
	}
	return errs
}

// assertNoNetNS checks that no pod network namespace of the cluster is
// left on the host.
func assertNoNetNS(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(c.NetNSes()) > 0 && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
	}
	if left := c.NetNSes(); len(left) > 0 {
		t.Errorf("network namespaces left: %v", left)
	}
}

// A node lost mid-run (its agent stops: processes gone, kubelet API
// silent, Node and pods still in the API): the legs of its pods end as
// errors that name the pod and its node, quickly, not after the API
// retry window; the other pairs carry on; report.json is whole; nothing is
// left once the run's clean-up force-deletes the dead node's pods.
func TestNodeLostMidRun(t *testing.T) {
	c := needCluster(t)
	nodes := faultNodes(t, c, "lost", 4)
	var lostNode string
	lost := map[string]bool{}
	var lostPods []string
	stop := onText("round 3/", 0, func() {
		pods, eps := podsOf(t, c, "e2e-lost")
		perNode := map[string][]string{}
		for p, n := range pods {
			perNode[n] = append(perNode[n], p)
		}
		for _, n := range nodes { // the node with the most of the run's pods
			if len(perNode[n]) > len(perNode[lostNode]) {
				lostNode = n
			}
		}
		for _, p := range perNode[lostNode] {
			lost[eps[p]] = true
			lostPods = append(lostPods, p)
		}
		sort.Strings(lostPods)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.StopNode(ctx, lostNode); err != nil {
			t.Errorf("stop node %s: %v", lostNode, err)
		}
		t.Logf("node %s stopped with pods %v (endpoints %v)", lostNode, lostPods, lost)
	})
	start := time.Now()
	r := run(t, c, writeScenario(t, faultScenario("e2e-lost", "lost")), 6*time.Minute, stop)
	took := time.Since(start)
	if lostNode == "" {
		t.Fatal("the node was never stopped")
	}
	faultVerdicts(t, r, lost, func(reason string) bool { return strings.Contains(reason, lostNode) })
	// 7 rounds of 2 s legs: a lost node's legs must not each wait out the
	// 90 s retry window, nor the 30 s leg timeout.
	if took > 150*time.Second {
		t.Errorf("the run took %s: the lost node's legs stalled their rounds", took.Round(time.Second))
	}
	assertNothingLeft(t, c)
	assertNoNetNS(t, c)
}

// A pod deleted and another evicted mid-run: their legs end as errors
// naming the pod, the other pairs carry on, report.json is whole, nothing
// is left.
func TestPodDeletedAndEvictedMidRun(t *testing.T) {
	c := needCluster(t)
	faultNodes(t, c, "gone", 4)
	lost := map[string]bool{}
	var deleted, evicted string
	fault := onText("round 3/", 0, func() {
		pods, eps := podsOf(t, c, "e2e-gone")
		var names []string
		for p := range pods {
			names = append(names, p)
		}
		sort.Strings(names)
		deleted, evicted = names[1], names[len(names)-2]
		lost[eps[deleted]], lost[eps[evicted]] = true, true
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Client().CoreV1().Pods("e2e-gone").Delete(ctx, deleted, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete pod %s: %v", deleted, err)
		}
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: evicted, Namespace: "e2e-gone"}}
		if err := c.Client().CoreV1().Pods("e2e-gone").EvictV1(ctx, ev); err != nil {
			t.Errorf("evict pod %s: %v", evicted, err)
		}
		t.Logf("deleted %s (%s), evicted %s (%s)", deleted, eps[deleted], evicted, eps[evicted])
	})
	start := time.Now()
	r := run(t, c, writeScenario(t, faultScenario("e2e-gone", "gone")), 6*time.Minute, fault)
	took := time.Since(start)
	if deleted == "" {
		t.Fatal("no pod was deleted")
	}
	faultVerdicts(t, r, lost, func(reason string) bool {
		return strings.Contains(reason, deleted) || strings.Contains(reason, evicted)
	})
	if took > 150*time.Second {
		t.Errorf("the run took %s: the gone pods' legs stalled their rounds", took.Round(time.Second))
	}
	assertNothingLeft(t, c)
	assertNoNetNS(t, c)
}

// The apiserver restarted during a round of the 8-pod matrix (4 pairs, 8
// exec streams and their readiness polls in flight): every leg is in
// report.json, each a pass or an error that says what broke (never a
// pod named lost: the pods and nodes are fine), the last round passes,
// and nothing is left once the agents' watches resume.
func TestAPIServerRestartDuringMatrixRound(t *testing.T) {
	c := needCluster(t)
	faultNodes(t, c, "restart", 4)
	restart := onText("round 3/", 500*time.Millisecond, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.RestartAPIServer(ctx); err != nil {
			t.Errorf("restart apiserver: %v", err)
		}
		t.Log("apiserver restarted")
	})
	r := run(t, c, writeScenario(t, faultScenario("e2e-restart-matrix", "restart")), 6*time.Minute, restart)
	if r.rep == nil {
		t.Fatalf("exit %d: no report.json", r.code)
	}
	if len(r.rep.Results) != 56 {
		t.Errorf("%d results in report.json, want all 56 legs", len(r.rep.Results))
	}
	for _, res := range r.rep.Results {
		round := strings.Split(res.JobID, "/")[1]
		switch {
		case res.Verdict == schema.VerdictPass:
		case res.Verdict == schema.VerdictError && round != "r6" && !strings.Contains(res.Reason, "during the run") && !strings.Contains(res.Reason, "kubelet does not answer"):
			// cut by the restart, and saying what broke
		default:
			t.Errorf("%s %s->%s: %s %q", round, res.From, res.To, res.Verdict, res.Reason)
		}
	}
	assertNothingLeftWithin(t, c, 2*time.Minute)
	assertNoNetNS(t, c)
}
