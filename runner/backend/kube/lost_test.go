package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/backend"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod that is gone, or whose node is, is named with its node, remembered
// (later calls fail at once with the same reason, no API round trip), and
// never retried for the API's retry window; a healthy pod is not lost.
func TestCheckLost(t *testing.T) {
	b, cs := newTestBackend(t, testScenario())
	ctx := context.Background()
	ns := b.namespace
	mk := func(name, node string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{NodeName: node}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node := func(name string, ready corev1.ConditionStatus) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: "NodeStatusUnknown"}}}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node("n-ok", corev1.ConditionTrue)
	node("n-dead", corev1.ConditionUnknown)
	mk("healthy", "n-ok")
	mk("on-dead", "n-dead")
	mk("on-missing", "n-missing")
	b.pods["ep-gone"] = podInfo{name: "gone", node: "n-other"}
	b.pods["ep-dead"] = podInfo{name: "on-dead", node: "n-dead"}
	b.pods["ep-dead-2"] = podInfo{name: "dead-2", node: "n-dead"}

	if err := b.checkLost(target{pod: "healthy"}, errors.New("exit 1")); err != nil {
		t.Errorf("healthy pod: %v", err)
	}
	unreachable := errors.New(`error dialing backend: dial tcp 127.0.0.1:9: connect: connection refused`)
	wsUnreachable := errors.New(`Internal error occurred: error sending request: Post "https://127.0.0.1:45481/exec/ns/p/tools?command=true&output=1": dial tcp 127.0.0.1:45481: connect: connection refused`)
	for _, err := range []error{unreachable, wsUnreachable} {
		if transient(err) || !kubeletUnreachable(err) {
			t.Errorf("a kubelet the API cannot reach is retried for the whole retry window: %v", err)
		}
	}
	if err := b.checkLost(target{pod: "healthy"}, unreachable); err == nil || !strings.Contains(err.Error(), "n-ok") || !strings.Contains(err.Error(), "kubelet does not answer") {
		t.Errorf("unreachable kubelet: %v", err)
	}
	for pod, want := range map[string]string{
		"gone":       "pod gone on node n-other: was deleted during the run",
		"on-dead":    "pod on-dead on node n-dead: the node is not Ready (NodeStatusUnknown)",
		"on-missing": "pod on-missing on node n-missing: the node is gone",
	} {
		err := b.checkLost(target{pod: pod}, errors.New("stream broke"))
		if err == nil || !IsPodLost(err) || !errors.Is(err, backend.ErrEndpointLost) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v; want %q", pod, err, want)
		}
	}
	// A lost node loses every pod of the run on it.
	if err := b.lostErr("dead-2"); err == nil || !strings.Contains(err.Error(), "n-dead") {
		t.Errorf("the other pod on the lost node: %v", err)
	}
	if err := b.lostErr("gone"); err == nil || b.lostErr("healthy") == nil {
		t.Error("losses forgotten")
	}
	// Remembered: the next call on the pod fails at once, as lost.
	n := len(cs.Actions())
	if _, err := b.stream(ctx, target{pod: "on-dead"}, []string{"true"}, nil, nil); !IsPodLost(err) || len(cs.Actions()) != n {
		t.Errorf("a call on a lost pod: %v, %d API calls", err, len(cs.Actions())-n)
	}
}
