package kube

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/rdmabench/rdmabench/scenarios"
)

// servingScenario: pods from a serving image, the tools image's init
// container bringing the bundle; prefill runs perftest, nixlbench VRAM
// and NCCL, all in the one container; both pools have a GPU and an RDMA
// device each.
func servingScenario() *scenarios.Scenario {
	sc := testScenario()
	sc.Cluster.Image, sc.Cluster.ToolsImage = "serving:1", "tools:1"
	sc.Cluster.Memory, sc.Cluster.ShmSize, sc.Cluster.Hugepages = "4Gi", "2Gi", map[string]string{"2Mi": "1Gi"}
	sc.Pools[0].GPUs = scenarios.GPUs(1)
	sc.Pools[1].GPUs = scenarios.GPUs(1)
	sc.Tests = []scenarios.Test{
		{Name: "bw", Tool: scenarios.ToolIBWriteBW, From: "prefill", To: "prefill"},
		{Name: "kv", Tool: scenarios.ToolNixlbench, From: "decode", To: "prefill", Args: scenarios.Args{InitiatorSeg: "VRAM", TargetSeg: "VRAM"}},
		{Name: "ar", Tool: scenarios.ToolNCCL, From: "prefill", To: "prefill", Args: scenarios.Args{Collective: "all_reduce"}},
	}
	return sc
}

// One container per pod, from cluster.image, asking once for the GPU and
// the RDMA device (a device plugin gives an SR-IOV VF to one container:
// every test of the pod runs here), with /dev/shm, the hugepages and the
// bundle mounted, rdmabench's keep-alive from the bundle; one init
// container from the tools image that copies the bundle and asks for no
// device.
func TestPodIsOneContainerFromTheImage(t *testing.T) {
	b, _ := newTestBackend(t, servingScenario())
	pod, err := b.podFor(planned(t, b.sc, "prefill-0")[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 1 || len(pod.Spec.InitContainers) != 1 {
		t.Fatalf("containers %d, init containers %d: want one of each", len(pod.Spec.Containers), len(pod.Spec.InitContainers))
	}
	c, init := pod.Spec.Containers[0], pod.Spec.InitContainers[0]
	if c.Name != container || c.Image != "serving:1" || init.Image != "tools:1" {
		t.Errorf("container %s=%s, init %s=%s", c.Name, c.Image, init.Name, init.Image)
	}
	for name, want := range map[corev1.ResourceName]string{scenarios.DefaultGPUResource: "1", "rdma/roce_gdr": "1", corev1.ResourceMemory: "4Gi", "hugepages-2Mi": "1Gi"} {
		if q := c.Resources.Limits[name]; q.String() != want {
			t.Errorf("%s: %v, want %s (limits %v)", name, q.String(), want, c.Resources.Limits)
		}
	}
	for name := range init.Resources.Limits {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			t.Errorf("the init container asks for %s: a device goes to the one container", name)
		}
	}
	var mounts []string
	for _, m := range c.VolumeMounts {
		mounts = append(mounts, m.MountPath)
	}
	if strings.Join(mounts, " ") != "/dev/shm /dev/hugepages-2Mi "+BundleDir {
		t.Errorf("mounts %v", mounts)
	}
	if !slices.Equal(c.Command, []string{BundleBin + "/rdmabench", "pause"}) || c.SecurityContext.Capabilities.Add[0] != "IPC_LOCK" {
		t.Errorf("command %v, security context %+v", c.Command, c.SecurityContext)
	}
	if len(init.VolumeMounts) != 1 || init.VolumeMounts[0].Name != c.VolumeMounts[2].Name || !strings.Contains(init.Command[2], "cp -af "+BundleDir+"/. ") {
		t.Errorf("init container %+v: want it to copy the bundle into the emptyDir the container mounts", init)
	}
}

// Without cluster.toolsImage, the init container runs cluster.image (a
// CPU-only scenario in the tools image itself), and so does the etcd.
func TestToolsImageDefaultsToTheImage(t *testing.T) {
	sc := testScenario()
	sc.Tests = []scenarios.Test{{Name: "bw", Tool: scenarios.ToolIBWriteBW, From: "decode", To: "prefill"}}
	b, _ := newTestBackend(t, sc)
	pod, err := b.podFor(planned(t, b.sc, "prefill-0")[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.InitContainers[0].Image != sc.Cluster.Image || pod.Spec.Containers[0].Image != sc.Cluster.Image {
		t.Errorf("init %s, container %s: want both %s", pod.Spec.InitContainers[0].Image, pod.Spec.Containers[0].Image, sc.Cluster.Image)
	}
	sc.Cluster.Image, sc.Cluster.ToolsImage = "serving:1", "tools:1"
	if etcd, _ := b.etcdObjects(nil); etcd.Spec.Containers[0].Image != "tools:1" {
		t.Errorf("etcd image %s: want the tools image (rdmabench etcd)", etcd.Spec.Containers[0].Image)
	}
}

// Every exec runs with the bundle last on the image's PATH.
func TestExecPutsTheBundleOnPath(t *testing.T) {
	got := withBundlePath([]string{"ib_write_bw", "-d", "mlx5_0"})
	if got[0] != "sh" || !strings.Contains(got[2], `"${PATH:+$PATH:}`+BundleBin+`"`) || !slices.Equal(got[3:], []string{"sh", "ib_write_bw", "-d", "mlx5_0"}) {
		t.Errorf("%q", got)
	}
}
