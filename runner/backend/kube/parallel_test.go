package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// podsFor builds n endpoints' pods as Provision does.
func podsFor(t *testing.T, b *Backend, n int) ([]endpoint.Endpoint, []*corev1.Pod) {
	t.Helper()
	eps := make([]endpoint.Endpoint, n)
	pods := make([]*corev1.Pod, n)
	base := planned(t, b.sc, "decode-0")[0]
	for i := range eps {
		eps[i] = base
		eps[i].Name = fmt.Sprintf("decode-%d", i)
		p, err := b.podFor(eps[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		pods[i] = p
	}
	return eps, pods
}

// inFlightPods counts the pod creations in flight around the fake API
// (whose reactors run one at a time under its lock, so they cannot see
// concurrency themselves).
type inFlightPods struct {
	kubernetes.Interface
	now, most, calls atomic.Int32
}

type inFlightCore struct {
	typedcorev1.CoreV1Interface
	c *inFlightPods
}

type inFlightPodClient struct {
	typedcorev1.PodInterface
	c *inFlightPods
}

func (c *inFlightPods) CoreV1() typedcorev1.CoreV1Interface {
	return inFlightCore{c.Interface.CoreV1(), c}
}

func (c inFlightCore) Pods(ns string) typedcorev1.PodInterface {
	return inFlightPodClient{c.CoreV1Interface.Pods(ns), c.c}
}

func (p inFlightPodClient) Create(ctx context.Context, pod *corev1.Pod, o metav1.CreateOptions) (*corev1.Pod, error) {
	n := p.c.now.Add(1)
	defer p.c.now.Add(-1)
	p.c.calls.Add(1)
	for m := p.c.most.Load(); n > m && !p.c.most.CompareAndSwap(m, n); m = p.c.most.Load() {
	}
	time.Sleep(20 * time.Millisecond) // an apiserver's round trip, so that creations overlap
	return p.PodInterface.Create(ctx, pod, o)
}

// Pods are created CreateParallelism at a time: never more in flight, and
// as many as that while there are pods left.
func TestCreatePodsParallelBounded(t *testing.T) {
	b, cs := newTestBackend(t, testScenario())
	counting := &inFlightPods{Interface: cs}
	b.client = counting
	b.opts.CreateParallelism = 4
	eps, pods := podsFor(t, b, 24)
	if err := b.createPods(context.Background(), eps, pods, &metav1.OwnerReference{Name: "owner"}); err != nil {
		t.Fatal(err)
	}
	list, _ := cs.CoreV1().Pods(b.namespace).List(context.Background(), metav1.ListOptions{})
	if len(list.Items) != 24 || counting.calls.Load() != 24 || counting.most.Load() != 4 {
		t.Fatalf("%d pods created in %d calls, at most %d at once; want 24, 24, 4", len(list.Items), counting.calls.Load(), counting.most.Load())
	}
	if list.Items[0].OwnerReferences[0].Name != "owner" {
		t.Errorf("owner %+v", list.Items[0].OwnerReferences)
	}
}

// The first refused pod stops the creations not yet started, and is the
// error, with the apiserver's words.
func TestCreatePodsFirstFailureStops(t *testing.T) {
	b, cs := newTestBackend(t, testScenario())
	b.opts.CreateParallelism = 2
	var calls atomic.Int32
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls.Add(1)
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if strings.HasSuffix(pod.Name, "-decode-3") {
			return true, nil, errors.New(`pods "x" is forbidden: exceeded quota: pods=50`)
		}
		time.Sleep(10 * time.Millisecond)
		return false, nil, nil
	})
	eps, pods := podsFor(t, b, 40)
	err := b.createPods(context.Background(), eps, pods, &metav1.OwnerReference{Name: "owner"})
	if err == nil || !strings.Contains(err.Error(), "decode-3") || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("error %v, want decode-3's quota refusal", err)
	}
	if n := calls.Load(); n > 8 {
		t.Fatalf("%d creations attempted after the fourth failed; want the rest stopped", n)
	}
}

// A short command waits for an exec slot no longer than its caller: with
// every slot taken, it ends at its deadline with why, instead of hanging
// its round.
func TestExecWaitsForASlotBounded(t *testing.T) {
	b, _ := newTestBackend(t, testScenario())
	b.pods["decode-0"] = podInfo{name: "rdmabench-x-decode-0"}
	for range cap(b.execSlots) {
		b.execSlots <- struct{}{}
	}
	defer func() {
		for range cap(b.execSlots) {
			<-b.execSlots
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := b.Exec(ctx, endpoint.Endpoint{Name: "decode-0"}, []string{"true"})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("waiting for one of %d exec slots", DefaultExecParallelism)) {
		t.Fatalf("error %v, want the wait for an exec slot", err)
	}
}
