package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/rdmabench/rdmabench/scenarios"
)

// imagesScenario: prefill runs perftest (the tools image) and nixlbench
// VRAM (the nixl image) and nccl-tests (the nccl image, which is the nixl
// one: one container serves both); decode names its own nixl image and
// runs no nccl. Both pools have a GPU and an RDMA device each.
func imagesScenario() *scenarios.Scenario {
	sc := testScenario()
	sc.Cluster.Images = map[string]string{scenarios.ImageNixl: "serving:1", scenarios.ImageNCCL: "serving:1"}
	sc.Cluster.Memory, sc.Cluster.ShmSize, sc.Cluster.Hugepages = "4Gi", "2Gi", map[string]string{"2Mi": "1Gi"}
	sc.Pools[0].GPUs = scenarios.GPUs(1)
	sc.Pools[1].GPUs = scenarios.GPUs(1)
	sc.Pools[1].Images = map[string]string{scenarios.ImageNixl: "nixlbench:1"}
	sc.Tests = []scenarios.Test{
		{Name: "bw", Tool: scenarios.ToolIBWriteBW, From: "prefill", To: "prefill"},
		{Name: "kv", Tool: scenarios.ToolNixlbench, From: "decode", To: "prefill", Args: scenarios.Args{InitiatorSeg: "VRAM", TargetSeg: "VRAM"}},
		{Name: "ar", Tool: scenarios.ToolNCCL, From: "prefill", To: "prefill", Args: scenarios.Args{Collective: "all_reduce"}},
	}
	return sc
}

// One container per distinct image: the GPU only in the container whose
// tests use GPU memory, the RDMA device and hugepages in each container
// moving RDMA traffic, CPU, memory and /dev/shm in every one.
func TestPodRunsAContainerPerImage(t *testing.T) {
	b, _ := newTestBackend(t, imagesScenario())
	pre, err := b.podFor(planned(t, b.sc, "prefill-0")[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]corev1.Container{}
	var names []string
	for _, c := range pre.Spec.Containers {
		got[c.Name] = c
		names = append(names, c.Name+"="+c.Image)
	}
	if strings.Join(names, " ") != "tools=tools:1 nixl-nccl=serving:1" {
		t.Fatalf("containers %v: want the tools one and one for the image nixl and nccl share", names)
	}
	tools, gpu := got["tools"], got["nixl-nccl"]
	if _, ok := tools.Resources.Limits[scenarios.DefaultGPUResource]; ok {
		t.Errorf("tools container asks for the GPU: %v", tools.Resources.Limits)
	}
	if q := gpu.Resources.Limits[scenarios.DefaultGPUResource]; q.String() != "1" {
		t.Errorf("nixl-nccl container: GPU %v, want 1", gpu.Resources.Limits)
	}
	for _, c := range []corev1.Container{tools, gpu} {
		if q := c.Resources.Limits["rdma/roce_gdr"]; q.String() != "1" {
			t.Errorf("%s: both move RDMA traffic (perftest; nixlbench, NCCL), yet resources %v", c.Name, c.Resources.Limits)
		}
		if q := c.Resources.Limits[corev1.ResourceMemory]; q.String() != "4Gi" || len(c.VolumeMounts) != 2 ||
			c.VolumeMounts[0].MountPath != "/dev/shm" || c.VolumeMounts[1].MountPath != "/dev/hugepages-2Mi" {
			t.Errorf("%s: memory %v, mounts %v", c.Name, q.String(), c.VolumeMounts)
		}
		if c.SecurityContext.Capabilities.Add[0] != "IPC_LOCK" || c.Command[2] != keepAlive {
			t.Errorf("%s: security context %+v, command %v", c.Name, c.SecurityContext, c.Command)
		}
	}

	dec, err := b.podFor(planned(t, b.sc, "decode-0")[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dec.Spec.Containers) != 2 || dec.Spec.Containers[1].Name != "nixl" || dec.Spec.Containers[1].Image != "nixlbench:1" {
		t.Fatalf("decode containers %+v: want tools and nixl (its pool's image)", dec.Spec.Containers)
	}
	dt := dec.Spec.Containers[0]
	if _, ok := dt.Resources.Limits["rdma/roce_gdr"]; ok {
		t.Errorf("decode's tools container runs no RDMA test, yet asks for the device: %v", dt.Resources.Limits)
	}
	if len(dt.VolumeMounts) != 1 {
		t.Errorf("decode tools mounts %v: /dev/shm only (no hugepages: it moves no RDMA traffic)", dt.VolumeMounts)
	}
}

// A pool whose tests all run in the tools image keeps the one container,
// given everything, as before images per family.
func TestPodOfToolsImageAloneIsUnchanged(t *testing.T) {
	sc := testScenario()
	sc.Cluster.Images = map[string]string{scenarios.ImageNixl: "serving:1"}
	sc.Tests = []scenarios.Test{{Name: "bw", Tool: scenarios.ToolIBWriteBW, From: "decode", To: "prefill"}}
	b, _ := newTestBackend(t, sc)
	pod, err := b.podFor(planned(t, b.sc, "prefill-0")[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Name != "tools" {
		t.Fatalf("containers %+v", pod.Spec.Containers)
	}
	if q := pod.Spec.Containers[0].Resources.Limits[scenarios.DefaultGPUResource]; q.String() != "8" {
		t.Errorf("GPUs %v", pod.Spec.Containers[0].Resources.Limits)
	}
}
