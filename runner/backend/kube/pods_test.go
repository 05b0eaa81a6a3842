package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

func intp(n int) *int { return &n }

func testScenario() *scenarios.Scenario {
	secs := 30
	return &scenarios.Scenario{
		Metadata: scenarios.Metadata{Name: "pd"},
		Backend:  scenarios.BackendKube,
		Cluster: &scenarios.Cluster{
			Namespace: "bench", Image: "tools:1", Networks: []string{"roce-a"},
			Resources:    map[string]string{"rdma/roce_gdr": "1"},
			Capabilities: []string{"IPC_LOCK"}, AntiAffinity: "kubernetes.io/hostname",
			NodeSelector:    map[string]string{"rdma": "true"},
			Tolerations:     []scenarios.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}},
			ImagePullPolicy: "IfNotPresent", ImagePullSecrets: []string{"regcred"}, RuntimeClassName: "nvidia",
			Annotations: map[string]string{"team": "fabric"}, Labels: map[string]string{"app": "bench"},
			PriorityClassName: "high",
		},
		Pools: []scenarios.Pool{
			{Name: "prefill", Replicas: intp(2), GPUs: scenarios.GPUs(8)},
			{Name: "decode", Replicas: intp(2), AvoidPools: []string{"prefill"}, Networks: []string{"other/roce-b"},
				Tolerations: []scenarios.Toleration{{Key: "decode", Operator: "Equal", Value: "yes", Effect: "NoExecute", TolerationSeconds: &secs}}},
		},
	}
}

// planned are the named endpoints of sc as the planner makes them (their
// placement resolved from pool and cluster), all of them when no name is given.
func planned(t *testing.T, sc *scenarios.Scenario, names ...string) []endpoint.Endpoint {
	t.Helper()
	eps, err := plan.Endpoints(sc, plan.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		return eps
	}
	var out []endpoint.Endpoint
	for _, n := range names {
		for _, ep := range eps {
			if ep.Name == n {
				out = append(out, ep)
			}
		}
	}
	if len(out) != len(names) {
		t.Fatalf("endpoints %v: found %d of them", names, len(out))
	}
	return out
}

func newTestBackend(t *testing.T, sc *scenarios.Scenario, objs ...any) (*Backend, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	dryRunAdmits(cs)
	b, err := New(sc, Options{Client: cs, Config: &rest.Config{Host: "http://127.0.0.1:1"}, RunID: "20261124-061500-ab12",
		PollInterval: 10 * time.Millisecond, UnschedulableGrace: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return b, cs
}

// dryRunAdmits makes the fake API answer a dry-run create as an admitting
// apiserver does: the object back, nothing stored (the fake's tracker
// would store it).
func dryRunAdmits(cs *fake.Clientset) {
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if ca, ok := a.(k8stesting.CreateActionImpl); ok && len(ca.CreateOptions.DryRun) > 0 {
			return true, ca.Object, nil
		}
		return false, nil, nil
	})
}

func TestPodSpecCarriesThePlacement(t *testing.T) {
	b, _ := newTestBackend(t, testScenario())
	ep := planned(t, b.sc, "decode-1")[0]
	ep.Env = map[string]string{"UCX_TLS": "rc"}
	pod, err := b.podFor(ep, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != "rdmabench-20261124-061500-ab12-decode-1" || pod.Namespace != "bench" {
		t.Fatalf("name %s/%s", pod.Namespace, pod.Name)
	}
	for k, v := range map[string]string{LabelRun: "20261124-061500-ab12", LabelPool: "decode", LabelEndpoint: "decode-1", "app": "bench", LabelManagedBy: "rdmabench"} {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	if pod.Annotations[NetworksAnnotation] != "other/roce-b" || pod.Annotations["team"] != "fabric" {
		t.Errorf("annotations %v: the pool's networks replace the cluster's", pod.Annotations)
	}
	term := pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != "kubernetes.io/hostname" || strings.Join(term.LabelSelector.MatchExpressions[0].Values, ",") != "decode,prefill" ||
		term.LabelSelector.MatchLabels[LabelRun] != "20261124-061500-ab12" {
		t.Errorf("anti-affinity %+v", term)
	}
	c := pod.Spec.Containers[0]
	if q := c.Resources.Limits["rdma/roce_gdr"]; q.String() != "1" || !q.Equal(c.Resources.Requests["rdma/roce_gdr"]) {
		t.Errorf("resources %v", c.Resources)
	}
	if _, ok := c.Resources.Limits[scenarios.DefaultGPUResource]; ok {
		t.Errorf("decode has no gpus, yet asks for %s", scenarios.DefaultGPUResource)
	}
	if c.SecurityContext.Capabilities.Add[0] != "IPC_LOCK" || c.SecurityContext.Privileged != nil {
		t.Errorf("security context %+v", c.SecurityContext)
	}
	if len(pod.Spec.Tolerations) != 2 || *pod.Spec.Tolerations[1].TolerationSeconds != 30 {
		t.Errorf("tolerations %+v: the cluster's and the pool's", pod.Spec.Tolerations)
	}
	if c.ImagePullPolicy != corev1.PullIfNotPresent || pod.Spec.ImagePullSecrets[0].Name != "regcred" ||
		*pod.Spec.RuntimeClassName != "nvidia" || pod.Spec.PriorityClassName != "high" || pod.Spec.NodeSelector["rdma"] != "true" {
		t.Errorf("pod spec %+v", pod.Spec)
	}
	if c.Env[0].Name != "UCX_TLS" || c.Env[0].Value != "rc" {
		t.Errorf("env %v", c.Env)
	}
	pre, _ := b.podFor(planned(t, b.sc, "prefill-0")[0], nil)
	if q := pre.Spec.Containers[0].Resources.Limits[scenarios.DefaultGPUResource]; q.String() != "8" {
		t.Errorf("prefill gpus: 8 must ask for nvidia.com/gpu 8, got %v", pre.Spec.Containers[0].Resources.Limits)
	}
}

func TestHostNetworkDropsNetworks(t *testing.T) {
	sc := testScenario()
	sc.Cluster.HostNetwork = true
	sc.Pools[1].Networks = nil
	b, _ := newTestBackend(t, sc)
	pod, _ := b.podFor(planned(t, b.sc, "prefill-0")[0], nil)
	if !pod.Spec.HostNetwork || pod.Annotations[NetworksAnnotation] != "" || pod.Spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Fatalf("host network pod %+v %v", pod.Spec, pod.Annotations)
	}
}

func TestRunIDMustNamePods(t *testing.T) {
	for _, id := range []string{"", "Run_1", strings.Repeat("a", 41), "-x"} {
		if err := checkRunID(id); err == nil {
			t.Errorf("run id %q accepted", id)
		}
	}
	if err := checkRunID("20261124-061500-ab12"); err != nil {
		t.Fatal(err)
	}
}

func TestDataAttachmentFromNetworkStatus(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Annotations: map[string]string{NetworkStatusAnnotation: `[
 {"name": "cbr0", "interface": "eth0", "ips": ["10.244.1.5"], "mac": "aa:bb:cc:dd:ee:01", "default": true, "dns": {}},
 {"name": "bench/roce-a", "interface": "net1", "ips": ["192.168.50.3"], "mac": "aa:bb:cc:dd:ee:02", "dns": {}}]`}}}
	att, err := dataAttachment(pod, "roce-a")
	if err != nil || att.IP != "192.168.50.3" || att.Interface != "net1" || att.Network != "bench/roce-a" {
		t.Fatalf("%+v %v", att, err)
	}
	if _, err := dataAttachment(pod, "roce-b"); err == nil || !strings.Contains(err.Error(), "bench/roce-b is not among") || !strings.Contains(err.Error(), "cbr0, bench/roce-a") {
		t.Fatalf("missing network: %v", err)
	}
	delete(pod.Annotations, NetworkStatusAnnotation)
	if _, err := dataAttachment(pod, "roce-a"); err == nil || !strings.Contains(err.Error(), "Multus") {
		t.Fatalf("no annotation: %v", err)
	}
}

// startupFailure provisions against a fake API whose pods never become
// ready, with status set by mutate, and returns the error.
func startupFailure(t *testing.T, mutate func(*corev1.Pod)) error {
	t.Helper()
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	b, cs := newTestBackend(t, sc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The kubelet sets the status again and again until Provision returns:
	// the fake API's watch misses a change made between the informer's
	// LIST and its WATCH (it keeps no resource versions), and one update
	// lost there left the wait to its deadline (seen once in CI).
	// Only decode-0 fails; prefill-0 stays Pending, as a pod still
	// scheduling: the wait must fail on the one, not wait on the other.
	kctx, stop := context.WithCancel(ctx)
	done := kubelet(kctx, cs, func(p *corev1.Pod, _ int) {
		if strings.HasSuffix(p.Name, "-decode-0") {
			mutate(p)
		}
	})
	_, err := b.Provision(ctx, planned(t, b.sc, "prefill-0", "decode-0"))
	stop()
	<-done
	return err
}

func TestStartupFailuresCarryTheClusterReason(t *testing.T) {
	cases := []struct {
		name, reason, text string
		mutate             func(*corev1.Pod)
	}{
		{"unschedulable", "FailedScheduling", "didn't match pod anti-affinity rules. (more pods than nodes", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."}}
		}},
		{"image", "ImagePullBackOff", "tools:1", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, Image: "tools:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}}
		}},
		{"crash", "CrashLoopBackOff", "restarted 3 times; last exit code 1, Error", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, RestartCount: 3,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := startupFailure(t, c.mutate)
			var se *StartupError
			if !errors.As(err, &se) || se.Reason != c.reason || !strings.Contains(err.Error(), c.text) || !strings.HasSuffix(se.Pod, "-decode-0") {
				t.Fatalf("got %v, want %s with %q", err, c.reason, c.text)
			}
		})
	}
}

func TestStartupTimeoutNamesTheWaitingPods(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	sc.Cluster.StartupTimeout = scenarios.Duration{Raw: "200ms", Value: 200 * time.Millisecond}
	b, _ := newTestBackend(t, sc)
	_, err := b.Provision(context.Background(), planned(t, b.sc, "prefill-0"))
	var se *StartupError
	if !errors.As(err, &se) || se.Reason != "StartupTimeout" || !strings.Contains(err.Error(), "rdmabench-20261124-061500-ab12-prefill-0") ||
		!strings.Contains(err.Error(), "cluster.startupTimeout 200ms") {
		t.Fatalf("%v", err)
	}
}

func TestNamespaceCreatedOnlyWhenMissingAndCleanedOnlyThen(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	sc.Cluster.StartupTimeout = scenarios.Duration{Raw: "50ms", Value: 50 * time.Millisecond}
	b, cs := newTestBackend(t, sc)
	_, _ = b.Provision(context.Background(), planned(t, b.sc, "prefill-0"))
	ns, err := cs.CoreV1().Namespaces().Get(context.Background(), "bench", metav1.GetOptions{})
	if err != nil || ns.Labels[LabelCreatedBy] != "rdmabench" {
		t.Fatalf("namespace %v %v", ns, err)
	}
	if err := b.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "bench", metav1.GetOptions{}); err == nil {
		t.Fatal("the namespace the run created is still there")
	}
	pods, _ := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	cms, _ := cs.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
	if len(pods.Items)+len(cms.Items) != 0 {
		t.Fatalf("left: %d pods, %d configmaps", len(pods.Items), len(cms.Items))
	}

	// A namespace that existed before is kept.
	b2, cs2 := newTestBackend(t, sc)
	_, _ = cs2.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{})
	_, _ = b2.Provision(context.Background(), planned(t, b2.sc, "prefill-0"))
	if err := b2.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := cs2.CoreV1().Namespaces().Get(context.Background(), "bench", metav1.GetOptions{}); err != nil {
		t.Fatalf("a namespace that existed before the run was deleted: %v", err)
	}
}

// The SR-IOV CNI's device-info in network-status (the Network Plumbing
// WG's Device Information spec) names the pod's own RDMA device.
func TestDeviceInfoFromNetworkStatus(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Annotations: map[string]string{NetworkStatusAnnotation: `[
 {"name": "ovn-kubernetes", "interface": "eth0", "ips": ["10.128.2.14"], "default": true, "dns": {}},
 {"name": "bench/sriov-rdma", "interface": "net1", "ips": ["192.168.100.7"], "mac": "2e:1f:9a:00:11:22", "dns": {},
  "device-info": {"type": "pci", "version": "1.1.0", "pci": {"pci-address": "0000:3b:02.3", "rdma-device": "mlx5_7", "pf-pci-address": "0000:3b:00.0"}}},
 {"name": "bench/sriov-eth", "interface": "net2", "ips": ["192.168.101.7"], "dns": {},
  "device-info": {"type": "pci", "version": "1.1.0", "pci": {"pci-address": "0000:5e:01.2"}}}]`}}}
	att, err := dataAttachment(pod, "sriov-rdma")
	if err != nil || att.RDMADevice != "mlx5_7" || att.PCIAddress != "0000:3b:02.3" || att.Interface != "net1" {
		t.Fatalf("%+v %v", att, err)
	}
	att, err = dataAttachment(pod, "sriov-eth")
	if err != nil || att.RDMADevice != "" || att.PCIAddress != "0000:5e:01.2" {
		t.Fatalf("%+v %v", att, err)
	}
}

// A pool with perNode: 2 (decode) puts its pods on nodes two by two: each pod is
// labelled with its node group, held to the group's node by required pod
// affinity, kept from the pool's other groups and from the pools it
// avoids by anti-affinity, and attaches its own share of the rails.
func TestPodSpecPerNodeGroups(t *testing.T) {
	sc := testScenario()
	sc.Pools[1].PerNode = intp(2)
	sc.Pools[1].Networks = []string{"rail0", "rail1"}
	b, _ := newTestBackend(t, sc)
	pod, err := b.podFor(planned(t, sc, "decode-1")[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Labels[LabelNodeGroup] != "decode-n0" || pod.Annotations[NetworksAnnotation] != "rail1" {
		t.Errorf("labels %v networks %q: want group decode-n0 and the node's second rail", pod.Labels, pod.Annotations[NetworksAnnotation])
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.PodAffinity == nil || aff.PodAntiAffinity == nil {
		t.Fatalf("affinity %+v: want both pod affinity and anti-affinity", aff)
	}
	with := aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(with) != 1 || with[0].TopologyKey != "kubernetes.io/hostname" || with[0].LabelSelector.MatchLabels[LabelNodeGroup] != "decode-n0" ||
		with[0].LabelSelector.MatchLabels[LabelRun] != "20261124-061500-ab12" {
		t.Errorf("pod affinity %+v: want the group's pods on one node", with)
	}
	apart := aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(apart) != 2 {
		t.Fatalf("anti-affinity %+v: want the other pools and the pool's other groups", apart)
	}
	if e := apart[0].LabelSelector.MatchExpressions[0]; e.Key != LabelPool || strings.Join(e.Values, ",") != "prefill" {
		t.Errorf("anti-affinity against other pools %+v", e)
	}
	own := apart[1].LabelSelector
	if own.MatchLabels[LabelPool] != "decode" || own.MatchExpressions[0].Key != LabelNodeGroup ||
		own.MatchExpressions[0].Operator != metav1.LabelSelectorOpNotIn || own.MatchExpressions[0].Values[0] != "decode-n0" {
		t.Errorf("anti-affinity against the pool's other groups %+v", own)
	}
	// prefill, perNode unset, stays one per node.
	pre, _ := b.podFor(planned(t, sc, "prefill-0")[0], nil)
	if pre.Spec.Affinity.PodAffinity != nil || pre.Labels[LabelNodeGroup] != "" {
		t.Errorf("prefill: %+v %v: one per node, no group", pre.Spec.Affinity, pre.Labels)
	}
}
