package kube

import (
	"os"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// decodeManifest reads a multi-document YAML stream strictly, as
// `kubectl apply --dry-run=client` does: unknown fields are errors.
func decodeManifest(t *testing.T, data []byte) []runtime.Object {
	t.Helper()
	docs, err := DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]runtime.Object, len(docs))
	for i, d := range docs {
		objs[i] = d.Object
	}
	return objs
}

// The Role the CronJob carries and the shipped deploy/rbac.yaml are the
// same rules, from one definition: neither may drift from the other.
func TestShippedRoleIsRules(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.Role
	for _, obj := range decodeManifest(t, data) {
		if r, ok := obj.(*rbacv1.Role); ok {
			role = r
		}
	}
	if role == nil {
		t.Fatal("deploy/rbac.yaml has no Role")
	}
	if !reflect.DeepEqual(role.Rules, Rules()) {
		t.Errorf("deploy/rbac.yaml's Role differs from kube.Rules():\n file %+v\n code %+v", role.Rules, Rules())
	}
}

func TestCronJobOptionsAreChecked(t *testing.T) {
	_, err := CronJob(CronJobOptions{Scenario: "Bad_Name", Namespace: "ns", Schedule: "nightly", Image: "", ResultsClaim: "r", Storage: "ten"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`scenario name "Bad_Name"`, `schedule "nightly"`, "image: empty", `storage "ten"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
