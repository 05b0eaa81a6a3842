package kube

import (
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// countVerbs counts the fake API's list and watch requests on pods and
// events while a wait for Ready runs (the kubelet's own lists excluded:
// it lists every namespace's pods with no selector).
func countVerbs(cs *fake.Clientset, lists, watches *atomic.Int64) {
	cs.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if la, ok := a.(k8stesting.ListActionImpl); ok && (la.ListOptions.LabelSelector != "" || la.ListOptions.FieldSelector != "") {
			lists.Add(1)
		}
		return false, nil, nil
	})
	cs.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		watches.Add(1)
		return false, nil, nil
	})
}

// The wait for Ready watches: however many times the pod changes before
// it is Ready (here about 40), the API sees one LIST and one watch each
// of pods and events, not a LIST of both every poll.
func TestWaitReadyWatches(t *testing.T) {
	var lists, watches atomic.Int64
	err := provisionOne(t, func(cs *fake.Clientset) { countVerbs(cs, &lists, &watches) }, func(p *corev1.Pod, n int) {
		if n > 40 {
			readyStatus(p)
		} else {
			p.Status.Phase = corev1.PodPending
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d LISTs, %d watches", lists.Load(), watches.Load())
	if l, w := lists.Load(), watches.Load(); l > 3 || w < 1 {
		t.Errorf("%d LISTs and %d watches during the wait; want at most 3 LISTs (pods, events, the run's ConfigMap check) and a watch", l, w)
	}
}

// Where watching pods is refused, the wait polls instead (and says so).
func TestWaitReadyFallsBackToPolling(t *testing.T) {
	var lists atomic.Int64
	err := provisionOne(t, func(cs *fake.Clientset) {
		cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
		})
		countVerbs(cs, &lists, new(atomic.Int64))
	}, func(p *corev1.Pod, n int) {
		if n > 20 {
			readyStatus(p)
		}
	})
	if err != nil {
		t.Fatalf("a refused watch failed the wait: %v", err)
	}
	if lists.Load() < 3 {
		t.Errorf("%d LISTs: the wait did not poll once the watch was refused", lists.Load())
	}
}
