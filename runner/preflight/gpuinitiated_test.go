package preflight

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
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

// TestGPUInitiatedNotNeededOnOneHost: where every rank of the tests that
// asked for IBGDA shares one host (the local backend; one pod),
// the verdict none is a warning naming why (NVSHMEM goes over NVLink
// there, as it did on 4×H100 without a NIC: testdata/gpu/h100-deepep/pair);
// where ranks span pods or nodes, or a node is unknown, it stays a failure.
func TestGPUInitiatedNotNeededOnOneHost(t *testing.T) {
	failed := func() []schema.PreflightEndpoint {
		var out []schema.PreflightEndpoint
		for _, n := range []string{"ep-0", "ep-1"} {
			out = append(out, schema.PreflightEndpoint{Endpoint: n, Checks: []schema.PreflightCheck{
				{ID: tools.GPUInitiatedID, Status: schema.PreflightFail, Dooms: schema.DoomsTool, Evidence: "GPU-initiated RDMA: none; …", Fix: "load …"}}})
		}
		return out
	}
	at := map[string]int{"ep-0": 0, "ep-1": 1}
	units := []*preflightUnit{{ep: endpoint.Endpoint{Name: "ep-0"}, probeTests: map[string][]string{tools.GPUInitiatedID: {"deepep"}}},
		{ep: endpoint.Endpoint{Name: "ep-1"}, probeTests: map[string][]string{tools.GPUInitiatedID: {"deepep"}}}}
	uses := map[string]*testUse{"deepep": {at: map[string]bool{"ep-0": true, "ep-1": true}}}
	for _, tc := range []struct {
		name  string
		be    backend.Backend
		nodes [2]string
		want  string
	}{
		{"local backend", &localShells{}, [2]string{"", ""}, schema.PreflightWarn},
		// Two pods of one node each see their own GPUs alone (the device
		// plugin's): NVSHMEM has no peer GPU to reach over NVLink and
		// needs the NIC there too.
		{"pods on one node", &podShells{}, [2]string{"gpu-a", "gpu-a"}, schema.PreflightFail},
		{"pods on two nodes", &podShells{}, [2]string{"gpu-a", "gpu-b"}, schema.PreflightFail},
		{"nodes unknown", &podShells{}, [2]string{"", ""}, schema.PreflightFail},
	} {
		out := failed()
		eps := []endpoint.Endpoint{{Name: "ep-0", Node: tc.nodes[0]}, {Name: "ep-1", Node: tc.nodes[1]}}
		markOneHost(out, at, units, uses, tc.be, eps)
		for _, e := range out {
			c := e.Checks[0]
			if c.Status != tc.want {
				t.Errorf("%s: %s is %s, want %s: %s", tc.name, e.Endpoint, c.Status, tc.want, c.Evidence)
			}
			if tc.want == schema.PreflightWarn && (!strings.Contains(c.Evidence, "not needed here: every rank of deepep shares one host") || c.Fix == "") {
				t.Errorf("%s: evidence %q, fix %q: want why and the fix kept", tc.name, c.Evidence, c.Fix)
			}
			if _, doomed := Doomed(e, Needs{Probes: []string{tools.GPUInitiatedID}}); doomed == (tc.want == schema.PreflightWarn) {
				t.Errorf("%s: doomed %v", tc.name, doomed)
			}
		}
	}
}

// podShells is a pod backend (its endpoints are pods), never run here.
type podShells struct{ hostShells }

func (*podShells) RunsInPods() bool { return true }
func (*podShells) Name() string     { return scenarios.BackendKube }

// localShells is the local backend's kind: its endpoints share this host.
type localShells struct{ hostShells }

func (*localShells) SharesHost() bool { return true }
