package kube

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// TestShippedRBACDecodesStrictly reads deploy/rbac.yaml the way
// `kubectl apply --dry-run=client` does (typed, strict: an unknown or
// misspelled field is an error) and checks that the Role grants every verb
// the backend uses. The kube lane runs rdmabench with a token bound to it.
func TestShippedRBACDecodesStrictly(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := DecodeManifest(data)
	if err != nil {
		t.Fatalf("deploy/rbac.yaml: %v", err)
	}
	kinds := map[string]int{}
	var role *rbacv1.Role
	for _, d := range docs {
		kinds[d.Kind]++
		if r, ok := d.Object.(*rbacv1.Role); ok {
			role = r
		}
	}
	// Namespace-scoped only: the cluster-wide namespace role is a file of
	// its own (deploy/rbac-namespaces.yaml), applied by those who want it.
	if want := map[string]int{"Namespace": 1, "ServiceAccount": 1, "Role": 1, "RoleBinding": 1}; !maps.Equal(kinds, want) {
		t.Errorf("deploy/rbac.yaml holds %v, want %v", kinds, want)
	}
	if role == nil {
		t.Fatal("no Role")
	}
	need := map[string][]string{
		"pods": {"create", "get", "list", "delete"}, "pods/exec": {"create"}, "pods/log": {"get"},
		"configmaps": {"create", "delete", "list"}, "services": {"create", "delete", "list"}, "pods/portforward": {"create"}, "events": {"list"}, "network-attachment-definitions": {"get", "list"},
		"networkpolicies": {"create", "delete", "list"}, "resourceclaims": {"get"},
	}
	for res, verbs := range need {
		for _, v := range verbs {
			if !grants(role, res, v) {
				t.Errorf("the Role does not grant %s on %s", v, res)
			}
		}
	}
}

// TestShippedNamespaceRBAC: deploy/rbac-namespaces.yaml is the optional
// cluster-wide namespace role with its guard, the policy first (on a
// cluster older than 1.30 the first error says why), and says which
// versions guard it.
func TestShippedNamespaceRBAC(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/rbac-namespaces.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Kubernetes 1.30", "OpenShift 4.14, 4.15 and 4.16", "kubectl apply -f deploy/rbac-namespaces.yaml"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("deploy/rbac-namespaces.yaml does not say %q", want)
		}
	}
	docs, err := DecodeManifest(data)
	if err != nil {
		t.Fatalf("deploy/rbac-namespaces.yaml: %v", err)
	}
	var kinds []string
	for _, d := range docs {
		kinds = append(kinds, d.Kind)
	}
	if want := []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ClusterRole", "ClusterRoleBinding"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	for _, d := range docs {
		if p, ok := d.Object.(*admissionv1.ValidatingAdmissionPolicy); ok {
			if len(p.Spec.MatchConditions) != 1 || !strings.Contains(p.Spec.MatchConditions[0].Expression, "system:serviceaccount:rdmabench:rdmabench") ||
				!strings.Contains(p.Spec.Validations[0].Expression, LabelCreatedBy) {
				t.Errorf("the namespace guard must apply to the ServiceAccount and require %s: %+v", LabelCreatedBy, p.Spec)
			}
		}
	}
}

func grants(r *rbacv1.Role, resource, verb string) bool {
	for _, rule := range r.Rules {
		for _, res := range rule.Resources {
			if res != resource {
				continue
			}
			for _, v := range rule.Verbs {
				if v == verb {
					return true
				}
			}
		}
	}
	return false
}
