package kube

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// decodeManifest reads a multi-document YAML stream strictly, as
// `kubectl apply --dry-run=client` does: unknown fields are errors.
func decodeManifest(t *testing.T, data []byte) []runtime.Object {
	t.Helper()
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	rd := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		objs = append(objs, obj)
	}
}

// The Role the CronJob carries and the shipped deploy/rbac.yaml are the
// same rules, from one definition: neither may drift from the other.
func TestShippedRoleIsRules(t *testing.T) {
	data, err := os.ReadFile("../../deploy/rbac.yaml")
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
