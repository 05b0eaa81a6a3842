package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilexec "k8s.io/client-go/util/exec"
)

var sleeper = []string{"sleep", "infinity"}

func TestNodesReadyWithCapacity(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := c.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("got %d nodes, want 3", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		ready := false
		for _, cond := range n.Status.Conditions {
			ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Errorf("node %s not Ready: %+v", n.Name, n.Status.Conditions)
		}
		for res, want := range map[corev1.ResourceName]string{"nvidia.com/gpu": "8", "rdma/roce_gdr": "8", "cpu": "64", "pods": "110"} {
			got := n.Status.Allocatable[res]
			if got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("node %s: allocatable %s = %s, want %s", n.Name, res, got.String(), want)
			}
		}
		if len(n.Status.Addresses) == 0 || n.Status.Addresses[0].Address != "127.0.0.1" {
			t.Errorf("node %s: addresses %+v", n.Name, n.Status.Addresses)
		}
	}
}

type netStatus struct {
	Name      string   `json:"name"`
	Interface string   `json:"interface"`
	IPs       []string `json:"ips"`
	MAC       string   `json:"mac"`
	Default   bool     `json:"default"`
}

// secondaryIP reads the pod's network-status annotation and returns the
// IP of the named network, checking the default entry comes first.
func secondaryIP(t *testing.T, p *corev1.Pod, network string) string {
	t.Helper()
	var st []netStatus
	if err := json.Unmarshal([]byte(p.Annotations[agent.NetworkStatusAnnotation]), &st); err != nil {
		t.Fatalf("network-status: %v: %q", err, p.Annotations[agent.NetworkStatusAnnotation])
	}
	if len(st) < 2 || !st[0].Default || st[0].Interface != "eth0" || st[0].IPs[0] != p.Status.PodIP {
		t.Fatalf("network-status: want the default network first with the pod IP %s: %+v", p.Status.PodIP, st)
	}
	for _, s := range st[1:] {
		if s.Name == network && s.Default == false && strings.HasPrefix(s.Interface, "net") && s.MAC != "" && len(s.IPs) == 1 {
			return s.IPs[0]
		}
	}
	t.Fatalf("network-status has no %s: %+v", network, st)
	return ""
}

func withNetworks(v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{agent.NetworksAnnotation: v}
	}
}

func TestNetworkStatusAndExec(t *testing.T) {
	createPod(t, testPod("netstat", sleeper, withNetworks("rdma-net")))
	p := waitPod(t, "netstat", 30*time.Second, "Ready with network-status", func(p *corev1.Pod) bool {
		return isReady(p) && p.Annotations[agent.NetworkStatusAnnotation] != ""
	})
	ip := secondaryIP(t, p, "default/rdma-net")
	if !strings.HasPrefix(ip, "10.245.") {
		t.Errorf("secondary IP %s not in 10.245.0.0/16", ip)
	}
	for _, proto := range []string{"websocket", "spdy"} {
		t.Run(proto, func(t *testing.T) {
			out, _, err := execIn(t, "netstat", proto, "", "ip", "-4", "-o", "addr", "show", "net1")
			if err != nil || !strings.Contains(out, ip+"/16") {
				t.Fatalf("net1 in the pod: %v: %q", err, out)
			}
			out, errOut, err := execIn(t, "netstat", proto, "", "sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3")
			var ce utilexec.CodeExitError
			if !errors.As(err, &ce) || ce.Code != 3 {
				t.Fatalf("exit 3: got error %v (%T)", err, err)
			}
			if out != "to-stdout\n" || errOut != "to-stderr\n" {
				t.Errorf("streams: stdout %q stderr %q", out, errOut)
			}
			out, _, err = execIn(t, "netstat", proto, "hello from stdin", "cat")
			if err != nil || out != "hello from stdin" {
				t.Errorf("stdin: %v %q", err, out)
			}
		})
	}
}

func TestJSONNetworksAnnotationAndLogs(t *testing.T) {
	createPod(t, testPod("jsonnet", []string{"sh", "-c", "echo started; exec sleep infinity"},
		withNetworks(`[{"name":"net-a"},{"name":"net-b","namespace":"other"}]`)))
	p := waitPod(t, "jsonnet", 30*time.Second, "Ready", isReady)
	a, b := secondaryIP(t, p, "default/net-a"), secondaryIP(t, p, "other/net-b")
	if a == b {
		t.Errorf("two secondary networks share %s", a)
	}
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		b, err := c.Client().CoreV1().Pods("default").GetLogs("jsonnet", &corev1.PodLogOptions{}).DoRaw(ctx)
		return err == nil && string(b) == "started\n", nil
	})
	if err != nil {
		t.Errorf("logs never showed the container's output")
	}
}

// TestSecondaryNetworkIperf3: two pods on different nodes reach each other
// over the secondary network (iperf3 over TCP for one second).
func TestSecondaryNetworkIperf3(t *testing.T) {
	c := needCluster(t)
	nodes := c.NodeNames()
	createPod(t, testPod("iperf-server", []string{"iperf3", "-s"}, func(p *corev1.Pod) {
		withNetworks("rdma-net")(p)
		p.Spec.NodeName = nodes[0]
	}))
	createPod(t, testPod("iperf-client", sleeper, func(p *corev1.Pod) {
		withNetworks("rdma-net")(p)
		p.Spec.NodeName = nodes[1]
	}))
	srv := waitPod(t, "iperf-server", 30*time.Second, "Ready", isReady)
	waitPod(t, "iperf-client", 30*time.Second, "Ready", isReady)
	ip := secondaryIP(t, srv, "default/rdma-net")
	var out, errOut string
	var err error
	for i := 0; i < 20; i++ { // the server may need a moment to listen
		out, errOut, err = execIn(t, "iperf-client", "websocket", "", "iperf3", "-c", ip, "-t", "1", "-J")
		if err == nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("iperf3 -c %s: %v\n%s\n%s", ip, err, out, errOut)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.End.SumReceived.BitsPerSecond <= 0 {
		t.Fatalf("iperf3 result: %v\n%s", err, out)
	}
	t.Logf("iperf3 over the secondary network: %.1f Gb/s", res.End.SumReceived.BitsPerSecond/1e9)
}

// TestAntiAffinityMoreReplicasThanNodes: the real scheduler leaves the
// fourth pod Pending with its FailedScheduling event.
func TestAntiAffinityMoreReplicasThanNodes(t *testing.T) {
	c := needCluster(t)
	anti := func(p *corev1.Pod) {
		p.Labels["app"] = "anti"
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "anti"}},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}}
	}
	for i := 0; i < 4; i++ {
		createPod(t, testPod(fmt.Sprintf("anti-%d", i), sleeper, anti))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var msg string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		evs, err := c.Client().CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if strings.HasPrefix(e.InvolvedObject.Name, "anti-") {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal("no FailedScheduling event for the anti-affinity pods")
	}
	if !strings.Contains(msg, "anti-affinity") {
		t.Errorf("FailedScheduling message: %q", msg)
	}
	pods, err := c.Client().CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=anti"})
	if err != nil {
		t.Fatal(err)
	}
	pending, nodes := 0, map[string]bool{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			pending++
		} else {
			nodes[p.Spec.NodeName] = true
		}
	}
	if pending != 1 || len(nodes) != 3 {
		t.Errorf("want 3 pods on 3 distinct nodes and 1 pending; got %d pending, nodes %v", pending, nodes)
	}
}

func waitingReason(p *corev1.Pod) (string, string) {
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
		return "", ""
	}
	w := p.Status.ContainerStatuses[0].State.Waiting
	return w.Reason, w.Message
}

func TestBrokenImage(t *testing.T) {
	img := "registry.invalid/rdmabench/does-not-exist:1"
	createPod(t, testPod("broken", sleeper, func(p *corev1.Pod) { p.Spec.Containers[0].Image = img }))
	p := waitPod(t, "broken", 30*time.Second, "ImagePullBackOff", func(p *corev1.Pod) bool {
		r, _ := waitingReason(p)
		return r == "ImagePullBackOff"
	})
	if _, msg := waitingReason(p); !strings.Contains(msg, img) {
		t.Errorf("message does not name the image: %q", msg)
	}
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		evs, err := c.Client().CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=broken,reason=Failed"})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, img) && e.Source.Component == "kubelet" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no kubelet Failed event naming %s", img)
	}
}

func TestCrashLoopBackOff(t *testing.T) {
	createPod(t, testPod("crash", []string{"sh", "-c", "echo dying; exit 2"}, nil))
	p := waitPod(t, "crash", 30*time.Second, "CrashLoopBackOff after a restart", func(p *corev1.Pod) bool {
		r, _ := waitingReason(p)
		return r == "CrashLoopBackOff" && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 2 {
		t.Errorf("last termination: %+v", last)
	}
}

func TestRestartPolicyNeverSucceeds(t *testing.T) {
	createPod(t, testPod("once", []string{"true"}, func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }))
	waitPod(t, "once", 30*time.Second, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
}

// TestDeleteLeavesNothing: deleting a pod kills its processes, including a
// daemon started by exec in a new session, and removes its namespace.
func TestDeleteLeavesNothing(t *testing.T) {
	c := needCluster(t)
	createPod(t, testPod("victim", sleeper, withNetworks("rdma-net")))
	waitPod(t, "victim", 30*time.Second, "Ready", isReady)
	if _, _, err := execIn(t, "victim", "spdy", "", "sh", "-c", "setsid sleep 1000 >/dev/null 2>&1 < /dev/null &"); err != nil {
		t.Fatal(err)
	}
	mine := func() []agent.ProcessInfo {
		var out []agent.ProcessInfo
		for _, p := range c.Processes() {
			if p.Pod == "victim" {
				out = append(out, p)
			}
		}
		return out
	}
	if n := len(mine()); n < 2 {
		t.Fatalf("want the container and the daemon in the pod's namespace, found %d: %+v", n, mine())
	}
	before := len(c.NetNSes())
	deletePod(t, "default", "victim")
	if left := mine(); len(left) > 0 {
		t.Errorf("processes left after delete: %+v", left)
	}
	if after := len(c.NetNSes()); after != before-1 {
		t.Errorf("network namespaces: %d before delete, %d after", before, after)
	}
}

// TestRestartAPIServer: the API comes back and the nodes keep working.
func TestRestartAPIServer(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	createPod(t, testPod("after-restart", sleeper, nil))
	waitPod(t, "after-restart", 60*time.Second, "Ready", isReady)
	if out, _, err := execIn(t, "after-restart", "websocket", "", "echo", "ok"); err != nil || out != "ok\n" {
		t.Errorf("exec after restart: %v %q", err, out)
	}
}

// TestHostNetworkPod: no namespace of its own; the node's address; its
// process groups are ended on delete.
func TestHostNetworkPod(t *testing.T) {
	c := needCluster(t)
	createPod(t, testPod("hostnet", sleeper, func(p *corev1.Pod) { p.Spec.HostNetwork = true }))
	p := waitPod(t, "hostnet", 30*time.Second, "Ready", isReady)
	if p.Status.PodIP != "127.0.0.1" {
		t.Errorf("pod IP %s, want the node's 127.0.0.1", p.Status.PodIP)
	}
	if out, _, err := execIn(t, "hostnet", "websocket", "", "sh", "-c", "sleep 300 & echo started"); err != nil || out != "started\n" {
		t.Fatalf("exec: %v %q", err, out)
	}
	count := func() int {
		n := 0
		for _, p := range c.Processes() {
			if p.Pod == "hostnet" {
				n++
			}
		}
		return n
	}
	if n := count(); n < 2 {
		t.Fatalf("want the container and the exec'd sleep, found %d", n)
	}
	deletePod(t, "default", "hostnet")
	if n := count(); n != 0 {
		t.Errorf("%d processes left", n)
	}
}

func TestInitContainers(t *testing.T) {
	createPod(t, testPod("withinit", sleeper, func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "debian:stable", Command: []string{"sh", "-c", "echo init-ran"}}}
	}))
	p := waitPod(t, "withinit", 30*time.Second, "Ready", isReady)
	if len(p.Status.InitContainerStatuses) != 1 || p.Status.InitContainerStatuses[0].State.Terminated == nil ||
		p.Status.InitContainerStatuses[0].State.Terminated.Reason != "Completed" {
		t.Errorf("init container status: %+v", p.Status.InitContainerStatuses)
	}
	createPod(t, testPod("badinit", sleeper, func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "debian:stable", Command: []string{"false"}}}
	}))
	waitPod(t, "badinit", 30*time.Second, "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
}
