package kube

// Found by a fresh-eyes audit of the controller side of the kube backend
// (creates, the wait for Ready, exec slots, clean-up).

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// The apiserver stored the pod but answered the create with a server
// timeout (504, "may still be processing the request"): the retried
// create's AlreadyExists is the run's own pod, not a failure.
func TestCreateRetriedAfterItLandedIsNotAlreadyExists(t *testing.T) {
	b, cs := newTestBackend(t, testScenario())
	b.opts.CreateParallelism = 2
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	first := true
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if first && strings.HasSuffix(pod.Name, "-decode-1") {
			first = false
			// The create lands, the answer is lost to the restart.
			if err := cs.Tracker().Create(gvr, pod.DeepCopy(), pod.Namespace); err != nil {
				t.Error(err)
			}
			return true, nil, apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "create", 1)
		}
		return false, nil, nil
	})
	eps, pods := podsFor(t, b, 4)
	if err := b.createPods(context.Background(), eps, pods, &metav1.OwnerReference{Name: "owner"}); err != nil {
		t.Fatalf("the run's own pod, created by the first attempt, failed the run: %v", err)
	}
}

// A pod deleted while the run waits for Ready fails the wait at once,
// named (it was waited for until startupTimeout, and the error named no
// pod).
func TestPodDeletedWhileWaitingFailsAtOnceNamed(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	sc.Cluster.StartupTimeout = scenarios.Duration{Raw: "30s", Value: 30 * time.Second}
	b, cs := newTestBackend(t, sc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kctx, stop := context.WithCancel(ctx)
	deleted := false
	done := kubelet(kctx, cs, func(p *corev1.Pod, n int) {
		if strings.HasSuffix(p.Name, "-decode-0") && !deleted {
			deleted = true
			_ = cs.CoreV1().Pods("bench").Delete(context.Background(), p.Name, metav1.DeleteOptions{})
			return
		}
		readyStatus(p)
	})
	eps := planned(t, b.sc, "prefill-0", "decode-0")
	for i := range eps {
		eps[i].ResolveDevice = false
	}
	start := time.Now()
	_, err := b.Provision(ctx, eps)
	took := time.Since(start)
	stop()
	<-done
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
	if err == nil || !strings.Contains(err.Error(), "decode-0") {
		t.Errorf("the error does not name the deleted pod: %v", err)
	}
	// Not a timing test: the error is the deletion's, not the 30 s
	// startup timeout's.
	var se *StartupError
	if !errors.As(err, &se) || se.Reason != "NotFound" {
		t.Errorf("a deleted pod was waited for until startupTimeout: %v", err)
	}
}

// Ctrl-C lands while the run's owner ConfigMap is being created: the
// apiserver stored it, the client saw its context end. Cleanup (on a
// fresh context) must still look for it (it returned at once: "nothing
// was made").
func TestOwnerCreatedAsCtrlCLandsIsCleaned(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	b, cs := newTestBackend(t, sc)
	// The user's own namespace: exists, not the run's to delete.
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cs.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		cm := a.(k8stesting.CreateAction).GetObject().(*corev1.ConfigMap)
		if err := cs.Tracker().Create(gvr, cm.DeepCopy(), cm.Namespace); err != nil {
			t.Error(err)
		}
		cancel() // Ctrl-C, while the answer is on its way
		return true, nil, context.Canceled
	})
	eps := planned(t, b.sc, "prefill-0")
	if _, err := b.Provision(ctx, eps); err == nil {
		t.Fatal("Provision succeeded")
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	if err := b.Cleanup(cctx); err != nil {
		t.Fatal(err)
	}
	cms, _ := cs.CoreV1().ConfigMaps("bench").List(context.Background(), metav1.ListOptions{LabelSelector: LabelRun + "=" + b.opts.RunID})
	if len(cms.Items) != 0 {
		t.Errorf("left after Cleanup: configmap %s", cms.Items[0].Name)
	}
}

// A caller whose context has already ended runs nothing in the pod (both
// select cases were ready, Go picked either, and the session wrote the
// script before it looked at ctx again).
func TestCancelledCallerRunsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	es := &execServer{command: func(ctx context.Context, argv []string) *exec.Cmd {
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}}
	b := newExecBackend(t, es, nil)
	b.pods["decode-0"] = podInfo{name: "p"}
	ep := endpoint.Endpoint{Name: "decode-0"}
	// A live caller opens the pod's session.
	if _, err := b.Exec(context.Background(), ep, []string{"true"}); err != nil {
		t.Fatal(err)
	}
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	errs := 0
	for range 40 {
		if _, err := b.Exec(dead, ep, []string{"sh", "-c", "echo x >> " + marker}); err != nil {
			errs++
		}
	}
	time.Sleep(500 * time.Millisecond) // what was written runs
	data, _ := os.ReadFile(marker)
	if n := strings.Count(string(data), "x"); n > 0 {
		t.Errorf("40 calls with a cancelled context (%d returned an error): %d ran their command in the pod", errs, n)
	}
}

// The pods' LIST fails for good with a retryable error (a 500: the
// informer never syncs): the timeout names the pods and the failing list
// (it said "pod  cannot start").
func TestNeverSyncedWaitSaysWhy(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	sc.Cluster.StartupTimeout = scenarios.Duration{Raw: "500ms", Value: 500 * time.Millisecond}
	b, cs := newTestBackend(t, sc)
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if la, ok := a.(k8stesting.ListActionImpl); ok && strings.Contains(la.ListOptions.LabelSelector, LabelRun) {
			return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		}
		return false, nil, nil
	})
	_, err := b.Provision(context.Background(), planned(t, b.sc, "prefill-0"))
	t.Logf("%v", err)
	if err == nil || !strings.Contains(err.Error(), "prefill-0") && !strings.Contains(err.Error(), "etcdserver") {
		t.Errorf("the timeout names neither the pod nor the failing list: %v", err)
	}
}
