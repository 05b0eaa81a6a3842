package chart

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// APIVersions reads the group/versions discovery serves, which is how the
// chart learns it is on OpenShift.
func TestAPIVersionsFromDiscovery(t *testing.T) {
	cs := fake.NewClientset()
	cs.Resources = []*metav1.APIResourceList{{GroupVersion: "v1"}, {GroupVersion: "security.openshift.io/v1"}}
	got, err := APIVersions(cs.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "security.openshift.io/v1") || !slices.Contains(got, "v1") {
		t.Errorf("API versions %v", got)
	}
}
