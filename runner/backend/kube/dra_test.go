package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// A NIC attached through DRA (DraNet: a ResourceClaim's device with
// networkData, as KEP-4817 standardised it) gives the endpoint its address
// and interface from the claim's status, not the pod IP; a claim without
// network data (a GPU) leaves the pod network.
func TestDRANetworkFromTheClaim(t *testing.T) {
	b, cs := newTestBackend(t, testScenario())
	nic := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "a-0-nic-x7k2p", Namespace: "bench"},
		Status: resourcev1.ResourceClaimStatus{Devices: []resourcev1.AllocatedDeviceStatus{{
			Driver: "dra.net", Pool: "node-1", Device: "pci-0000-1a-00-0",
			NetworkData: &resourcev1.NetworkDeviceData{InterfaceName: "gpu0rdma0", IPs: []string{"10.10.0.5/24"}, HardwareAddress: "b8:3f:d2:00:10:05"}}}}}
	gpu := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared-gpus", Namespace: "bench"},
		Status: resourcev1.ResourceClaimStatus{Devices: []resourcev1.AllocatedDeviceStatus{{Driver: "gpu.nvidia.com", Pool: "node-1", Device: "gpu-0"}}}}
	for _, c := range []*resourcev1.ResourceClaim{nic, gpu} {
		if _, err := cs.ResourceV1().ResourceClaims("bench").Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	name := func(s string) *string { return &s }
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "bench"},
		Spec:   corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: name("shared-gpus")}, {Name: "nic"}}},
		Status: corev1.PodStatus{PodIP: "10.244.1.9", ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "nic", ResourceClaimName: name("a-0-nic-x7k2p")}}}}
	ep := endpoint.Endpoint{Name: "a-0", Placement: &endpoint.Placement{ResourceClaims: []endpoint.ResourceClaim{{Name: "gpu"}, {Name: "nic"}}}}
	if _, err := b.place(context.Background(), &ep, pod); err != nil {
		t.Fatal(err)
	}
	if ep.Address != "10.10.0.5" || ep.Interface != "gpu0rdma0" || !strings.Contains(ep.Network, "a-0-nic-x7k2p") || !strings.Contains(ep.Network, "dra.net") {
		t.Errorf("endpoint %+v", ep)
	}
	ep = endpoint.Endpoint{Name: "a-0", Placement: &endpoint.Placement{ResourceClaims: []endpoint.ResourceClaim{{Name: "gpu"}}}}
	pod.Spec.ResourceClaims, pod.Status.ResourceClaimStatuses = pod.Spec.ResourceClaims[:1], nil
	if _, err := b.place(context.Background(), &ep, pod); err != nil || ep.Address != "10.244.1.9" || ep.Network != "pod network" {
		t.Errorf("GPU claim only: %+v %v", ep, err)
	}
}
