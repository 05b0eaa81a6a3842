package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// kubelet plays the node for the fake API: it sets each pod's status with
// set (called with the pod and how many times it ran) until ctx ends.
func kubelet(ctx context.Context, cs *fake.Clientset, set func(p *corev1.Pod, n int)) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; ctx.Err() == nil; n++ {
			pods, _ := cs.CoreV1().Pods("bench").List(ctx, metav1.ListOptions{})
			for i := range pods.Items {
				p := pods.Items[i]
				set(&p, n)
				_, _ = cs.CoreV1().Pods("bench").UpdateStatus(ctx, &p, metav1.UpdateOptions{})
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return done
}

func readyStatus(p *corev1.Pod) {
	p.Status.Phase = corev1.PodRunning
	p.Spec.NodeName = "node-1"
	p.Status.PodIP = "10.244.0.9"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
}

func unschedulable(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}
}

// event records an event about the pod named name (uid, when it is seen).
func event(t *testing.T, cs *fake.Clientset, name, reason, typ, msg string, uid types.UID, at time.Time) {
	t.Helper()
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + "." + reason, Namespace: "bench"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "bench", Name: name, UID: uid},
		Reason:         reason, Type: typ, Message: msg, LastTimestamp: metav1.NewTime(at), FirstTimestamp: metav1.NewTime(at)}
	if _, err := cs.CoreV1().Events("bench").Create(context.Background(), e, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func provisionOne(t *testing.T, setup func(cs *fake.Clientset), set func(p *corev1.Pod, n int)) error {
	t.Helper()
	sc := testScenario()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	b, cs := newTestBackend(t, sc)
	if setup != nil {
		setup(cs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kctx, stop := context.WithCancel(ctx)
	done := kubelet(kctx, cs, set)
	eps := planned(t, b.sc, "prefill-0")
	eps[0].ResolveDevice = false // the fake API runs no exec to read the pod's sysfs
	_, err := b.Provision(ctx, eps)
	stop()
	<-done
	return err
}

// TestStaleSandboxEventOnAReadyPodIsNoise: a FailedCreatePodSandBox
// warning about a pod that is Ready (the CNI failed once, then worked)
// does not fail the run, however long it stays in the event list; nor
// does one about an earlier pod of the same name.
func TestStaleSandboxEventOnAReadyPodIsNoise(t *testing.T) {
	pod := "rdmabench-20261124-061500-ab12-prefill-0"
	err := provisionOne(t, func(cs *fake.Clientset) {
		event(t, cs, pod, "FailedCreatePodSandBox", corev1.EventTypeWarning, "network not ready: cni plugin not initialized", "", time.Now())
	}, func(p *corev1.Pod, n int) {
		if n > 5 { // Ready only after several polls, past the 30 ms window
			readyStatus(p)
		} else {
			p.Status.Phase = corev1.PodPending
			p.CreationTimestamp = metav1.NewTime(time.Now().Add(time.Hour)) // a later attempt than the event
		}
	})
	if err != nil {
		t.Fatalf("a stale sandbox warning failed the run: %v", err)
	}
	// An event about an earlier pod of the same name (another UID) is not
	// this pod's, however recent.
	err = provisionOne(t, func(cs *fake.Clientset) {
		event(t, cs, pod, "FailedCreatePodSandBox", corev1.EventTypeWarning, "old", "uid-of-an-earlier-pod", time.Now().Add(time.Hour))
	}, func(p *corev1.Pod, n int) {
		p.UID = "uid-now"
		if n > 5 {
			readyStatus(p)
		}
	})
	if err != nil {
		t.Fatalf("another pod's event failed the run: %v", err)
	}
	// The same warning about the current attempt of a pod still not
	// Ready fails the run once it outlasts the window, with its words.
	err = provisionOne(t, func(cs *fake.Clientset) {
		event(t, cs, pod, "FailedCreatePodSandBox", corev1.EventTypeWarning, `network "missing" not found`, "", time.Now().Add(time.Hour))
	}, func(p *corev1.Pod, _ int) { p.Status.Phase = corev1.PodPending })
	var se *StartupError
	if !errors.As(err, &se) || se.Reason != "FailedCreatePodSandBox" || !strings.Contains(se.Msg, `network "missing" not found`) {
		t.Fatalf("a current sandbox failure: %v", err)
	}
}

// TestScaleUpWaitsUntilStartupTimeout: an unschedulable pod the cluster
// autoscaler is adding a node for (TriggeredScaleUp), or that has a node
// nominated, outlasts the fail-fast window; it starts when the node comes.
// Without either it fails fast, with the autoscaler's words where it gave
// some (NotTriggerScaleUp).
func TestScaleUpWaitsUntilStartupTimeout(t *testing.T) {
	pod := "rdmabench-20261124-061500-ab12-prefill-0"
	scaleUp := func(cs *fake.Clientset) {
		event(t, cs, pod, "TriggeredScaleUp", corev1.EventTypeNormal, "pod triggered scale-up: [{gpu-pool 2->3 (max: 8)}]", "", time.Now().Add(time.Hour))
	}
	start := time.Now()
	err := provisionOne(t, scaleUp, func(p *corev1.Pod, n int) {
		if time.Since(start) > 300*time.Millisecond { // ten windows later, the node is there
			readyStatus(p)
		} else {
			unschedulable(p)
		}
	})
	if err != nil {
		t.Fatalf("a pod the autoscaler is adding a node for: %v", err)
	}
	start = time.Now()
	err = provisionOne(t, nil, func(p *corev1.Pod, n int) {
		if time.Since(start) > 300*time.Millisecond {
			readyStatus(p)
		} else {
			unschedulable(p)
			p.Status.NominatedNodeName = "node-7"
		}
	})
	if err != nil {
		t.Fatalf("a pod with a nominated node: %v", err)
	}
	err = provisionOne(t, func(cs *fake.Clientset) {
		event(t, cs, pod, "NotTriggerScaleUp", corev1.EventTypeNormal, "pod didn't trigger scale-up: 1 max node group size reached", "", time.Now().Add(time.Hour))
	}, func(p *corev1.Pod, _ int) { unschedulable(p) })
	var se *StartupError
	if !errors.As(err, &se) || se.Reason != "FailedScheduling" || !strings.Contains(se.Msg, "3 Insufficient nvidia.com/gpu") ||
		!strings.Contains(se.Msg, "the cluster autoscaler: pod didn't trigger scale-up: 1 max node group size reached") {
		t.Fatalf("no scale-up coming: %v", err)
	}
}
