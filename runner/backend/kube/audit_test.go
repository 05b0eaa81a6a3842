package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Pool names may have 40 characters and run ids too: cut to 63, the names
// of pool-0 and pool-1 must still differ, and stay DNS labels with the
// run's prefix (the event filter relies on it).
func TestLongPodNamesStayDistinct(t *testing.T) {
	b, _ := newTestBackend(t, testScenario())
	b.opts.RunID = strings.Repeat("r", 40)
	pool := strings.Repeat("p", 40)
	a, c := b.podName(pool+"-0"), b.podName(pool+"-1")
	if a == c {
		t.Fatalf("two endpoints share pod name %s", a)
	}
	for _, n := range []string{a, c} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Fatalf("%s: %v", n, errs)
		}
		if !strings.HasPrefix(n, "rdmabench-"+b.opts.RunID+"-") {
			t.Fatalf("%s lost the run's prefix", n)
		}
	}
	if short := b.podName("decode-0"); short != "rdmabench-"+b.opts.RunID+"-decode-0" {
		t.Fatalf("a name that fits changed: %s", short)
	}
}

func TestDataAttachmentInterfaceForm(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Annotations: map[string]string{NetworkStatusAnnotation: `[
 {"name": "cbr0", "interface": "eth0", "ips": ["10.244.1.5"], "default": true},
 {"name": "bench/roce-a", "interface": "net1", "ips": ["192.168.50.3"]},
 {"name": "bench/roce-a", "interface": "rdma0", "ips": ["192.168.60.3"]}]`}}}
	att, err := dataAttachment(pod, "roce-a@rdma0")
	if err != nil || att.IP != "192.168.60.3" || att.Interface != "rdma0" {
		t.Fatalf("%+v %v", att, err)
	}
	att, err = dataAttachment(pod, "bench/roce-a")
	if err != nil || att.IP != "192.168.50.3" {
		t.Fatalf("%+v %v", att, err)
	}
}

// A namespace this run created is not deleted while another run has pods
// in it.
func TestCreatedNamespaceKeptForAnotherRun(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	sc.Cluster.StartupTimeout.Value = 50 * time.Millisecond
	b, cs := newTestBackend(t, sc)
	ctx := context.Background()
	_, _ = b.Provision(ctx, planned(t, b.sc, "prefill-0"))
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rdmabench-other-prefill-0", Namespace: "bench",
		Labels: map[string]string{LabelRun: "other", LabelManagedBy: managedBy}}}
	if _, err := cs.CoreV1().Pods("bench").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := b.Cleanup(ctx)
	if err == nil || !strings.Contains(err.Error(), "run(s) other still have pods") {
		t.Fatalf("clean-up: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "bench", metav1.GetOptions{}); err != nil {
		t.Fatalf("the namespace was deleted under another run: %v", err)
	}
	if _, err := cs.CoreV1().Pods("bench").Get(ctx, other.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("another run's pod was deleted: %v", err)
	}
	if _, err := cs.CoreV1().Pods("bench").Get(ctx, b.podName("prefill-0"), metav1.GetOptions{}); err == nil {
		t.Fatal("the run's own pod is still there")
	}
}

// A tool whose process group never became known must not use up the
// clean-up's time: the pods are deleted all the same.
func TestCleanupNotHeldByAStuckKill(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	sc.Cluster.StartupTimeout.Value = 50 * time.Millisecond
	b, cs := newTestBackend(t, sc)
	b.killBound = 50 * time.Millisecond
	ctx := context.Background()
	_, _ = b.Provision(ctx, planned(t, b.sc, "prefill-0"))
	p := b.newProcess(target{pod: b.podName("prefill-0")}, []string{"ib_write_bw"}, func() {})
	b.procs.Track(p, true)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := b.Cleanup(cctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("clean-up took %s", d)
	}
	pods, _ := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if len(pods.Items) != 0 {
		t.Fatalf("%d pod(s) left", len(pods.Items))
	}
}

func TestCleanupBeforeProvisionAndEtcdWithout(t *testing.T) {
	b, _ := newTestBackend(t, testScenario())
	if err := b.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, _, err := b.StartEtcd(ctx); err == nil {
		t.Log("StartEtcd without Provision started (fake API); no panic is what counts")
	}
	if err := b.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
}
