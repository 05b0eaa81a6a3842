package scenarios

import (
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

// ToolsImageOf is the image of the pods' init container, which copies
// rdmabench and its RDMA tool bundle into the one container:
// cluster.toolsImage, else cluster.image (a CPU-only scenario that runs
// in the tools image itself).
func (c *Cluster) ToolsImageOf() string {
	if c == nil {
		return ""
	}
	if strings.TrimSpace(c.ToolsImage) != "" {
		return c.ToolsImage
	}
	return c.Image
}

// NeedsGPU says whether a test cannot run without a GPU on its endpoints
// (the tool table's decision: nccl-tests, nixlbench with a VRAM segment,
// perftest with useCuda).
func NeedsGPU(t *Test) bool { return tool.NeedsGPU(t.Tool, t.Settings()) }

// IsGPUResource says whether an extended resource is a GPU (a device
// plugin's): nvidia.com/gpu, its time-sliced renames (nvidia.com/gpu.shared)
// and NVIDIA's MIG slices (nvidia.com/mig-1g.10gb), amd.com/gpu, Intel's
// gpu.intel.com/i915 and /xe, any VENDOR/gpu. Not every nvidia.com name:
// the Network Operator's RDMA resources are nvidia.com/ too
// (nvidia.com/sriov_rdma, nvidia.com/rdma_shared_device_a).
func IsGPUResource(name string) bool {
	return strings.HasSuffix(name, "/gpu") || strings.HasPrefix(name, "nvidia.com/gpu.") ||
		strings.HasPrefix(name, "nvidia.com/mig-") || strings.HasPrefix(name, "gpu.intel.com/")
}

// imagesGone is the hint for a scenario that still names per-family
// containers (cluster.images, pools[].images).
const imagesGone = "write cluster.image: your serving image (the one vLLM or llm-d serves with: its NCCL, NIXL, UCX; " +
	"nixlbench and nccl-tests where it has them), and cluster.toolsImage: rdmabench's tools image, whose init container " +
	"brings rdmabench, perftest, rping and iperf3 into it; then remove this key (docs/user-guide/images.md)"

// noImages refuses an images section: a pod has one container, from
// cluster.image, and every test of the pod runs in it, so that the one
// RDMA device (an SR-IOV VF) a device plugin gives one container serves
// them all.
func (v *validator) noImages(path string, owner any) {
	if v.written(path, owner, "images") {
		v.keyErrf(path, imagesGone,
			"per-family containers are gone: every test of a pod runs in its one container, from cluster.image (two containers asking for the RDMA resource split the pod's device)")
	}
}
