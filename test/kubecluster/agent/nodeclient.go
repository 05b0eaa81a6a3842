package agent

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// nodeStatusClient is the client virtual-kubelet's node controller gets.
// It differs from the agent's own in one thing: a Node Get or Patch that
// fails because its context ended returns an error that is no longer a
// context error.
//
// Why: virtual-kubelet v1.12.0 updates node status inside client-go's
// retry.RetryOnConflict, and retry.OnError (client-go v0.35) treats any
// error that wait.Interrupted recognises (context.Canceled among them) as
// its own timeout and returns the last *conflict* error instead, which is
// nil when there was none. updateNodeStatus then reads the nil node and
// the test binary panics (seen once in CI, as an agent stopped in the
// middle of a status update). Hiding the context error keeps it an error.
type nodeStatusClient struct{ kubernetes.Interface }

func (c nodeStatusClient) CoreV1() typedcorev1.CoreV1Interface {
	return nodeStatusCoreV1{c.Interface.CoreV1()}
}

type nodeStatusCoreV1 struct{ typedcorev1.CoreV1Interface }

func (c nodeStatusCoreV1) Nodes() typedcorev1.NodeInterface {
	return nodeStatusNodes{c.CoreV1Interface.Nodes()}
}

type nodeStatusNodes struct{ typedcorev1.NodeInterface }

func (n nodeStatusNodes) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error) {
	node, err := n.NodeInterface.Get(ctx, name, opts)
	return node, notContextError(err)
}

func (n nodeStatusNodes) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error) {
	node, err := n.NodeInterface.Patch(ctx, name, pt, data, opts, subresources...)
	return node, notContextError(err)
}

// notContextError returns err, with a context error's identity removed
// (its text is kept).
func notContextError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("node status request ended with its context: %s", err.Error())
	}
	return err
}
