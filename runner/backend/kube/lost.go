package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/rdmabench/rdmabench/runner/backend"
)

// lostCheckBound bounds the look at a pod and its node after a failure.
const lostCheckBound = 10 * time.Second

// errPodLost is a pod of the run that is gone, or whose node is: every
// later call on it fails at once with the same reason, so a lost node's
// legs end as errors in every round without each waiting on the API.
type errPodLost struct {
	pod, node, why string
}

func (e *errPodLost) Error() string {
	if e.node == "" {
		return fmt.Sprintf("pod %s %s", e.pod, e.why)
	}
	return fmt.Sprintf("pod %s on node %s: %s", e.pod, e.node, e.why)
}

// Is makes it a backend.ErrEndpointLost: the runner stops waiting on it.
func (e *errPodLost) Is(target error) bool { return target == backend.ErrEndpointLost }

// IsPodLost says whether err is a pod (or its node) lost mid-run.
func IsPodLost(err error) bool {
	var e *errPodLost
	return errors.As(err, &e)
}

// lostErr is the recorded loss of pod, or nil.
func (b *Backend) lostErr(pod string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err, ok := b.lost[pod]; ok {
		return err
	}
	return nil
}

// kubeletUnreachable says whether err is the apiserver failing to reach a
// node's kubelet (the API itself answered): not worth the retry window.
// The apiserver says so in its own words: "error dialing backend: dial
// tcp …" (SPDY, most apiservers), "Internal error occurred: error sending
// request: Post "https://<node>:10250/exec/…": dial tcp …" (the WebSocket
// exec of 1.30 and later).
func kubeletUnreachable(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "error dialing backend") || strings.Contains(msg, "Internal error occurred: error sending request")
}

// checkLost looks at pod and its node after a call on it failed (cause):
// when the pod was deleted or evicted, or its node is gone, not Ready or
// its kubelet unreachable, it records and returns why; else nil. One GET
// of each, bounded; an API that does not answer proves nothing.
func (b *Backend) checkLost(pod target, cause error) error {
	if err := b.lostErr(pod.pod); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), lostCheckBound)
	defer cancel()
	node := b.nodeOfPod(pod.pod)
	var why string
	nodeLost := false
	p, err := b.client.CoreV1().Pods(b.namespace).Get(ctx, pod.pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		why = "was deleted during the run (deleted or evicted)"
	case err != nil:
		return nil
	case p.Status.Reason == "Evicted" || p.Status.Phase == corev1.PodFailed:
		why = fmt.Sprintf("failed during the run (%s: %s)", orText(p.Status.Reason, string(p.Status.Phase)), p.Status.Message)
	case p.DeletionTimestamp != nil:
		why = "is being deleted (deleted or evicted during the run)"
	}
	if p != nil && p.Spec.NodeName != "" {
		node = p.Spec.NodeName
	}
	if why == "" && node != "" {
		n, err := b.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			why = "the node is gone from the cluster"
		case err != nil:
		default:
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
					why = fmt.Sprintf("the node is not Ready (%s)", orText(c.Reason, string(c.Status)))
				}
			}
		}
		if why == "" && kubeletUnreachable(cause) {
			why = "the node's kubelet does not answer (node lost?): " + cause.Error()
		}
		if why == "" {
			// The API still says Ready (a node's status lags its death by
			// up to the node monitor's grace period), and the failure was
			// a stream that ended or a process killed, which a node dying
			// also makes: ask its kubelet.
			if perr := b.probeKubelet(ctx, pod); kubeletUnreachable(perr) {
				why = "the node's kubelet does not answer (node lost?): " + perr.Error()
			}
		}
		nodeLost = why != ""
	}
	if why == "" {
		return nil
	}
	lost := b.recordLost(&errPodLost{pod: pod.pod, node: node, why: why})
	if nodeLost && node != "" {
		// Every pod of the run on that node is lost with it.
		b.mu.Lock()
		var others []string
		for _, p := range b.pods {
			if p.node == node && p.name != pod.pod {
				others = append(others, p.name)
			}
		}
		b.mu.Unlock()
		for _, o := range others {
			_ = b.recordLost(&errPodLost{pod: o, node: node, why: why})
		}
	}
	return lost
}

// probeKubelet runs `true` in pod through an exec of its own (not the
// session, which may be what ended), bounded: its error says whether the
// pod's kubelet answers.
func (b *Backend) probeKubelet(ctx context.Context, pod target) error {
	if rc, ok := b.client.CoreV1().RESTClient().(*rest.RESTClient); !ok || rc == nil || b.config == nil {
		return nil // a fake clientset (unit tests): nothing to exec through
	}
	ctx, cancel := context.WithTimeout(ctx, lostProbeBound)
	defer cancel()
	_, err := b.execStream(ctx, pod, []string{"true"}, nil, io.Discard, io.Discard)
	return err
}

// lostProbeBound bounds probeKubelet, within lostCheckBound.
const lostProbeBound = 5 * time.Second

// recordLost remembers a lost pod (the first reason stays), says so, and
// ends the exec streams of its tools still running: a stream to a node
// that died may never end by itself.
func (b *Backend) recordLost(e *errPodLost) error {
	b.mu.Lock()
	if prev, ok := b.lost[e.pod]; ok {
		b.mu.Unlock()
		return prev
	}
	b.lost[e.pod] = e
	b.mu.Unlock()
	b.progressf("%s", e.Error())
	for _, p := range b.procs.Snapshot() {
		if p.pod.pod == e.pod {
			p.cancel()
		}
	}
	return e
}

// nodeOfPod is the node the backend placed pod on, "" if unknown.
func (b *Backend) nodeOfPod(pod string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pods {
		if p.name == pod {
			return p.node
		}
	}
	return ""
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
