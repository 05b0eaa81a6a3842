package kube

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestShippedRBACDecodesStrictly reads deploy/rbac.yaml the way
// `kubectl apply --dry-run=client` does (typed, strict: an unknown or
// misspelled field is an error) and checks that the Role grants every verb
// the backend uses. The kube lane runs rdmabench with a token bound to it.
func TestShippedRBACDecodesStrictly(t *testing.T) {
	data, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	rd := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	kinds := map[string]int{}
	var role *rbacv1.Role
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("deploy/rbac.yaml: %v", err)
		}
		kinds[gvk.Kind]++
		if r, ok := obj.(*rbacv1.Role); ok {
			role = r
		}
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s objects, want 1", kinds[k], k)
		}
	}
	if role == nil {
		t.Fatal("no Role")
	}
	need := map[string][]string{
		"pods": {"create", "get", "list", "delete"}, "pods/exec": {"create"}, "pods/log": {"get"},
		"configmaps": {"create", "delete", "list"}, "services": {"create", "delete", "list"}, "pods/portforward": {"create"}, "events": {"list"}, "network-attachment-definitions": {"get", "list"},
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
