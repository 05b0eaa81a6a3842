package scenarios

import "testing"

// TestIsGPUResource: the GPU resources are the GPU device plugins' (whole
// GPUs and MIG slices), not every name of a vendor's domain: the NVIDIA
// Network Operator names its RDMA resources nvidia.com/ too.
func TestIsGPUResource(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu": true, "nvidia.com/mig-1g.10gb": true, "nvidia.com/mig-3g.40gb": true, "amd.com/gpu": true, "intel.com/gpu": true,
		"nvidia.com/gpu.shared": true, "gpu.intel.com/i915": true, "gpu.intel.com/xe": true,
		"nvidia.com/sriov_rdma": false, "nvidia.com/rdma_shared_device_a": false, "nvidia.com/hostdev": false,
		"openshift.io/mlxnics": false, "rdma/rdma_shared_device_a": false, "": false,
	} {
		if got := IsGPUResource(name); got != want {
			t.Errorf("IsGPUResource(%q) = %v, want %v", name, got, want)
		}
	}
}
