package kube

import (
	"os"
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
	for _, k := range []string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s objects, want 1", kinds[k], k)
		}
	}
	if role == nil {
		t.Fatal("no Role")
	}
	for _, d := range docs {
		if p, ok := d.Object.(*admissionv1.ValidatingAdmissionPolicy); ok {
			if len(p.Spec.MatchConditions) != 1 || !strings.Contains(p.Spec.MatchConditions[0].Expression, "system:serviceaccount:rdmabench:rdmabench") ||
				!strings.Contains(p.Spec.Validations[0].Expression, LabelCreatedBy) {
				t.Errorf("the namespace guard must apply to the ServiceAccount and require %s: %+v", LabelCreatedBy, p.Spec)
			}
		}
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
