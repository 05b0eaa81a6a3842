package agent

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/retry"
)

// A status update whose Get ends with its context must fail, not succeed
// with no node: virtual-kubelet's updateNodeStatus reads the node it gets
// back when the retry loop says nil (the CI panic this client prevents).
func TestNodeStatusClientKeepsContextErrorsErrors(t *testing.T) {
	canceled := fake.NewClientset()
	canceled.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, context.Canceled
	})
	update := func(client kubernetes.Interface) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			_, err := client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			return err
		})
	}
	// Upstream's behaviour, kept here so that a fixed client-go shows up:
	// the context error is swallowed.
	if err := update(canceled); err != nil {
		t.Logf("client-go's retry now returns context errors (%v): nodeStatusClient may go", err)
	}
	if err := update(nodeStatusClient{canceled}); err == nil {
		t.Fatal("a node Get ended by its context: RetryOnConflict returned nil through nodeStatusClient")
	}
}
