package e2ekube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// twoPoolsOnNode1 is an iperf3 test between two one-pod pools that are
// both pinned to node-1, with what each pod gets.
func twoPoolsOnNode1(ns, poolA string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-placement
backend: kube
cluster:
  namespace: ` + ns + `
  image: rdmabench/tools:test
  networks: [default/data-net]
  nodeSelector: {kubernetes.io/hostname: node-1}
  cpu: 500m
  memory: 1Gi
  shmSize: 256Mi
  startupTimeout: 90s
pools:
` + poolA + `  - name: b
tests:
  - name: iperf3
    tool: iperf3
    from: a
    to: b
    args: {duration: 1s}
`
}

// TestPoolsThatTestEachOtherAreKeptApart: two pools that test each other,
// with no avoidPools, pinned to one node: they are kept apart (required
// anti-affinity), so the run fails fast with the scheduler's words
// instead of measuring the node's bridge. With shareNodesWith they share
// the node, and the result says it is not a fabric figure. The pods get
// what they asked: requests = limits (Guaranteed QoS), /dev/shm.
func TestPoolsThatTestEachOtherAreKeptApart(t *testing.T) {
	c := needCluster(t)
	r := run(t, c, writeScenario(t, twoPoolsOnNode1("e2e-apart", "  - name: a\n")), 2*time.Minute, nil)
	if r.code != 3 || !strings.Contains(r.stderr, "FailedScheduling") || !strings.Contains(r.stderr, "didn't match pod anti-affinity rules") {
		t.Fatalf("exit %d; want 3 and the scheduler's anti-affinity words", r.code)
	}
	assertNothingLeft(t, c)

	r = run(t, c, writeScenario(t, twoPoolsOnNode1("e2e-share", "  - name: a\n    shareNodesWith: [b]\n")), 3*time.Minute, nil, "--keep", "--run-id", "share-1")
	if r.code != 0 || r.rep == nil || len(r.rep.Results) != 1 {
		t.Fatalf("exit %d with shareNodesWith", r.code)
	}
	res := r.rep.Results[0]
	if res.Verdict != schema.VerdictPass || res.SameMachine != "node-1" || !strings.Contains(res.Reason, "not a fabric figure") {
		t.Errorf("result %s sameMachine %q reason %q: want it marked as on one node", res.Verdict, res.SameMachine, res.Reason)
	}
	pods, err := c.Client().CoreV1().Pods("e2e-share").List(context.Background(), metav1.ListOptions{LabelSelector: "rdmabench.io/run=share-1"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("%v %d pods", err, len(pods.Items))
	}
	for _, p := range pods.Items {
		shm := false
		for _, v := range p.Spec.Volumes {
			shm = shm || v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory && v.EmptyDir.SizeLimit.String() == "256Mi"
		}
		if p.Status.QOSClass != corev1.PodQOSGuaranteed || !shm {
			t.Errorf("pod %s: QoS %s, memory-backed 256Mi /dev/shm %v", p.Name, p.Status.QOSClass, shm)
		}
	}
	if out, err := runCmd(t, "clean", "--kubeconfig", c.Kubeconfig, "--all", "-n", "e2e-share"); err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	assertNothingLeft(t, c)
}

// TestNodeAddedWhileTheRunWaits: a pool whose nodes do not exist yet (its
// node selector matches none), as on a cluster that scales up. The test
// plays the cluster autoscaler: once the pod is unschedulable it records
// TriggeredScaleUp on it, as the autoscaler does, and 20 s after the pods
// were created the new node joins. The run waits past the fail-fast
// window (15 s) because the scale-up was triggered, and passes.
func TestNodeAddedWhileTheRunWaits(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sc := tcpScenario("e2e-scale", "", "")
	sc = sc[:strings.Index(sc, "pools:")] + `pools:
  - name: prefill
  - name: decode
    nodeSelector: {e2e-pool: scaled}
tests:
  - name: iperf3
    tool: iperf3
    from: decode
    to: prefill
    args: {duration: 1s}
`
	autoscaled := make(chan error, 1)
	go func() { autoscaled <- playAutoscaler(ctx, c) }()
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil)
	if err := <-autoscaled; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.RemoveNode(context.Background(), "node-scaled"); err != nil {
			t.Error(err)
		}
	})
	if r.code != 0 || !strings.Contains(r.stderr, "the cluster autoscaler is adding a node (TriggeredScaleUp") {
		t.Fatalf("exit %d; want 0, having waited for the node", r.code)
	}
	for _, ep := range r.rep.Endpoints {
		if ep.Pool == "decode" && ep.Node != "node-scaled" {
			t.Errorf("decode on %s, want the node added", ep.Node)
		}
	}
	assertNothingLeft(t, c)
}

// playAutoscaler waits for the run's unschedulable pod, records
// TriggeredScaleUp on it (as the cluster autoscaler does, an event from
// component cluster-autoscaler) and adds the node 20 s after the pod was
// created. Bounded by ctx.
func playAutoscaler(ctx context.Context, c *cluster.Cluster) error {
	cs := c.Client()
	var pod *corev1.Pod
	for pod == nil {
		pods, err := cs.CoreV1().Pods("e2e-scale").List(ctx, metav1.ListOptions{LabelSelector: "rdmabench.io/pool=decode"})
		if err == nil {
			for i, p := range pods.Items {
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
						pod = &pods.Items[i]
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no unschedulable decode pod: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	now := metav1.Now()
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Reason:         "TriggeredScaleUp", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "cluster-autoscaler"},
		Message: "pod triggered scale-up: [{e2e-scaled 0->1 (max: 1)}]", FirstTimestamp: now, LastTimestamp: now, Count: 1}
	if _, err := cs.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(pod.CreationTimestamp.Add(20 * time.Second))):
	}
	return c.AddNode(ctx, "node-scaled", map[string]string{"e2e-pool": "scaled"})
}

// TestDeviceFromNetworkStatus: on a network whose CNI reports device-info
// (the test agent writes it as the SR-IOV CNI does: a virtual function
// and its RDMA device), each pod's device is the one its network-status
// names, read at run time. The test nodes have no such device, so the
// RDMA test is skipped with exactly that; the TCP test runs.
func TestDeviceFromNetworkStatus(t *testing.T) {
	c := needCluster(t)
	sc := strings.Replace(tcpScenario("e2e-sriov", "", `  - name: write-bw
    tool: ib_write_bw
    from: decode
    to: prefill
    pattern: many-to-one
`), "networks: [default/data-net]", "networks: [default/sriov-net]", 1)
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil)
	if r.code != 0 || r.rep == nil {
		t.Fatalf("exit %d", r.code)
	}
	skipped := 0
	for _, res := range r.rep.Results {
		if res.Test != "write-bw" {
			continue
		}
		skipped++
		if res.Verdict != schema.VerdictSkipped || !strings.Contains(res.Reason, "network-status device-info of default/sriov-net names RDMA device mlx5_") ||
			!strings.Contains(res.Reason, "which is not under /sys/class/infiniband here") {
			t.Errorf("%s %s->%s: %s %q; want skipped, naming the device device-info gave", res.Test, res.From, res.To, res.Verdict, res.Reason)
		}
	}
	if skipped == 0 {
		t.Error("no write-bw result")
	}
	assertNothingLeft(t, c)
}
