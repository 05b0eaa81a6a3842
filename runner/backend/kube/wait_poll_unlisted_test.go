package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// The run's pods cannot be listed (RBAC refuses list on pods): the watch
// gives up, the wait polls, every LIST fails, and startupTimeout passes:
// the timeout says the pods could not be listed, on this path as on the
// informer's.
func TestPolledTimeoutSaysPodsUnlisted(t *testing.T) {
	b, cs := newTestBackend(t, testScenario())
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	names := []string{"rdmabench-20261124-061500-ab12-decode-0"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	pods, err := b.waitReady(ctx, names)
	msg := b.timeoutError(2*time.Second, names, pods, err).Error()
	if !strings.Contains(msg, "could not be listed") {
		t.Errorf("wait error %v; timeout: %s", err, msg)
	}
}
