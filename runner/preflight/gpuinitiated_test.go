package preflight

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// A test that asks for IBGDA (NVSHMEM's env, as llm-d's wide-EP guide sets
// it) gets the gpu-initiated check on its pods; on the GPU machine's facts
// (serving-stack.md: no PeerMappingOverride, no nvidia_peermem, no
// /dev/gdrdrv) the verdict is none, the check fails with each fix, and the
// test is doomed there; a test without that env gets no such check.
func TestGPUInitiatedVerdictDoomsTheTest(t *testing.T) {
	test := &scenarios.Test{Tool: "nccl", Env: map[string]string{"NVSHMEM_REMOTE_TRANSPORT": "ibgda", "NVSHMEM_IB_ENABLE_IBGDA": "true"}}
	probes := tools.ProbesOf(test, "nccl")
	var ids []string
	for _, p := range probes {
		ids = append(ids, p.ID)
	}
	if !strings.Contains(strings.Join(ids, " "), tools.GPUInitiatedID) {
		t.Fatalf("probes %v lack %s", ids, tools.GPUInitiatedID)
	}
	gpuMachine := "param=RmProfilingAdminOnly: 0\nparam=GrdmaPciTopoCheckOverride: 0\nparam=RegistryDwords: \"\"\n" +
		"nvidia=NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04\nkernel=6.18.44-fc-v657-gpu\nuid=0\nnvshmem_pip=3.4.5\nnccl_pip=2.28.9\n"
	f := Facts{Probes: map[string]string{tools.GPUInitiatedID: gpuMachine}}
	for _, p := range probes {
		if p.ID != tools.GPUInitiatedID {
			f.Probes[p.ID] = "nccl=/usr/lib/libnccl.so.2\n" // the others pass or warn: not under test
		}
	}
	checks := Evaluate(f, Want{Endpoint: "ep-0", Pod: true, Probes: probes})
	var c schema.PreflightCheck
	for _, x := range checks {
		if x.ID == tools.GPUInitiatedID {
			c = x
		}
	}
	if c.Status != schema.PreflightFail || !strings.HasPrefix(c.Evidence, "GPU-initiated RDMA: none") ||
		!strings.Contains(c.Fix, "PeerMappingOverride=1") || !strings.Contains(c.Fix, "nvidia_peermem") || !strings.Contains(c.Fix, "gdrdrv") {
		t.Fatalf("%+v", c)
	}
	ep := schema.PreflightEndpoint{Endpoint: "ep-0", Checks: checks}
	if got, doomed := Doomed(ep, Needs{Probes: []string{tools.GPUInitiatedID}}); !doomed || got.ID != tools.GPUInitiatedID {
		t.Errorf("doomed %v by %+v", doomed, got)
	}
	for _, p := range tools.ProbesOf(&scenarios.Test{Tool: "nccl"}, "nccl") {
		if p.ID == tools.GPUInitiatedID {
			t.Error("a test without NVSHMEM's IBGDA env gets the gpu-initiated check")
		}
	}
}
