package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Each pod requests a device of every network it attaches whose
// NetworkAttachmentDefinition names a device plugin resource
// (k8s.v1.cni.cncf.io/resourceName, as the SR-IOV operator writes it), one
// per attachment, as Multus' network resources injector would add: a pod
// of a node with perNode attaches its own rail and requests that rail's
// VF alone. A resource the scenario requests itself keeps its value.
func TestNetworkResourcesPerAttachment(t *testing.T) {
	byNAD := map[string]string{"rail0": "openshift.io/rail0", "bench/rail1": "openshift.io/rail1", "other/rail1": "openshift.io/rail1", "plain": ""}
	got := networkResources([]string{"rail0", "bench/rail1", "other/rail1", "plain"}, byNAD, map[string]string{"nvidia.com/gpu": "1"})
	if len(got) != 2 || got["openshift.io/rail0"] != 1 || got["openshift.io/rail1"] != 2 {
		t.Errorf("%v: want rail0 1, rail1 2 (two attachments of its pool)", got)
	}
	if got := networkResources([]string{"rail0"}, byNAD, map[string]string{"openshift.io/rail0": "2"}); len(got) != 0 {
		t.Errorf("%v: the scenario's own request stands", got)
	}

	sc := testScenario()
	sc.Pools[1].PerNode = intp(2)
	sc.Pools[1].Networks = []string{"rail0", "bench/rail1"}
	b, _ := newTestBackend(t, sc)
	b.nadResources = byNAD
	eps := planned(t, sc, "decode-0", "decode-1")
	pods := make([]*corev1.Pod, len(eps))
	for i, ep := range eps {
		pod, err := b.podFor(ep, nil)
		if err != nil {
			t.Fatal(err)
		}
		pods[i] = pod
	}
	b.requestNetworkResources(pods, eps)
	for i, want := range []string{"openshift.io/rail0", "openshift.io/rail1"} {
		c := pods[i].Spec.Containers[0]
		if q := c.Resources.Limits[corev1.ResourceName(want)]; !q.Equal(resource.MustParse("1")) || !q.Equal(c.Resources.Requests[corev1.ResourceName(want)]) {
			t.Errorf("%s: resources %v; want %s 1, requested and limited", eps[i].Name, c.Resources, want)
		}
		if len(c.Resources.Limits) != 2 { // the scenario's rdma/roce_gdr, its rail's
			t.Errorf("%s: limits %v; want its own rail's resource alone added", eps[i].Name, c.Resources.Limits)
		}
	}
}
