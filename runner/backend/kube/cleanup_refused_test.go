package kube

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// A user who may not create namespaces, naming one that does not exist:
// the create is refused (403, a definite answer: nothing was made), so
// Cleanup has nothing to look for and makes no call (the mark set before
// a create, for one that may have landed, must not outlive a refusal).
func TestRefusedNamespaceCreateLeavesNothingToClean(t *testing.T) {
	b, cs := newTestBackend(t, testScenario())
	cs.PrependReactor("create", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "bench", nil)
	})
	cs.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: a.GetResource().Resource}, "", nil)
	})
	if err := b.ensureNamespace(context.Background(), "privileged"); err == nil {
		t.Fatal("the refused create succeeded")
	}
	before := len(cs.Actions())
	err := b.Cleanup(context.Background())
	if err != nil {
		t.Errorf("Cleanup after a refused namespace create (nothing made): %v", err)
	}
	if n := len(cs.Actions()) - before; n > 0 {
		t.Errorf("Cleanup made %d API calls for a run that created nothing: %v", n, cs.Actions()[before:])
	}
}
