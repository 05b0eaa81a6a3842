package kube

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

func statusPod(t *testing.T, file string) *corev1.Pod {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "bench",
		Annotations: map[string]string{NetworkStatusAnnotation: string(raw)}}}
}

// Every network a pod asks for is read from network-status, in the
// order asked, with the device its CNI names.
func TestAttachmentsOfEveryRail(t *testing.T) {
	b, _ := newTestBackend(t, testScenario())
	pod := statusPod(t, "network-status-4rails.json")
	atts, err := b.attachments(pod, []string{"rail-0", "rail-1", "bench/rail-2", "rail-3"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range atts {
		got = append(got, a.Interface+"="+a.RDMADevice+"@"+a.IP)
	}
	want := "net1=mlx5_10@192.168.10.21 net2=mlx5_11@192.168.11.21 net3=mlx5_12@192.168.12.21 net4=mlx5_13@192.168.13.21"
	if strings.Join(got, " ") != want {
		t.Errorf("rails %v, want %s", got, want)
	}
	if _, err := b.attachments(pod, []string{"rail-0", "rail-9"}); err == nil || !strings.Contains(err.Error(), "rail-9") {
		t.Errorf("a missing rail: %v", err)
	}
}

// recordedVM answers discovery's exec with a recorded sysfs tree and its
// nvidia-smi topo -m.
func recordedVM(root string) func(context.Context, endpoint.Endpoint, []string) ([]byte, error) {
	return func(ctx context.Context, _ endpoint.Endpoint, argv []string) ([]byte, error) {
		if argv[2] == nic.TopoScript {
			b, _ := os.ReadFile(filepath.Join(root, nic.TopoFile))
			return b, nil
		}
		return exec.CommandContext(ctx, "sh", "-c", strings.Replace(argv[2], "cd /", "cd "+root, 1)).Output()
	}
}

// A pod on two networks has two rails, each with its own device, GID and
// line rate: rail-a's from device-info, rail-b's from its interface and address;
// a pod on one network has none (its endpoint is as before).
func TestRailsResolvedFromNetworkStatus(t *testing.T) {
	b, _ := newTestBackend(t, testScenario())
	b.disc = remote.Discovery{Exec: recordedVM("../../../nic/testdata/sysfs/rxe-vm-rails"),
		Key: func(endpoint.Endpoint) string { return "pod p" }, Prefix: "kube"}
	pod := statusPod(t, "network-status-rxe-rails.json")
	ep := endpoint.Endpoint{Name: "a-0", ResolveDevice: true, Placement: &endpoint.Placement{Networks: []string{"rail-a", "rail-b"}}}
	got, err := b.settle(context.Background(), ep, pod)
	if err != nil {
		t.Fatal(err)
	}
	if got.Device != "rxe0" || got.Address != "10.9.0.1" || len(got.Rails) != 2 {
		t.Fatalf("endpoint %+v", got)
	}
	r := got.Rails[1]
	if r.Device != "rxe1" || r.Interface != "eth2" || r.Address != "10.9.1.1" || r.GIDIndex == nil || *r.GIDIndex != 2 ||
		r.RateBps != 2.5e9 || r.Network != "bench/rail-b" {
		t.Errorf("rail 1 %+v", r)
	}
	if r0 := got.Rails[0]; r0.Device != "rxe0" || r0.Interface != "eth0" || r0.GIDIndex == nil || *r0.GIDIndex != 1 {
		t.Errorf("rail 0 %+v", r0)
	}
	ep.Placement.Networks = []string{"rail-a"}
	if got, err = b.settle(context.Background(), ep, pod); err != nil || got.Rails != nil || got.Device != "rxe0" {
		t.Errorf("one network: %+v %v", got, err)
	}
}

// On GKE a network's interface is the one the pod's interfaces annotation
// gives it (Google's A3 Ultra manifests: rdma-0 on eth2 … rdma-7 on eth9,
// eth1 being gvnic-1), not its place in the scenario's list.
func TestGKEInterfaceFromThePod(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "gke-a3ultra-pod-annotations.json"))
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(raw, &pod.Annotations); err != nil {
		t.Fatal(err)
	}
	b := &Backend{plat: PlatformGKE}
	atts, err := b.attachments(pod, []string{"rdma-0", "rdma-1", "rdma-7"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range atts {
		got = append(got, a.Interface+"="+a.IP)
	}
	if want := "eth2=192.168.2.12 eth3=192.168.3.12 eth9=192.168.9.12"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// Each GPU an endpoint uses is reported with its relation to the NIC it
// uses: on the ConnectX-7 tree a pod on rail-0 alone has GPU2 and GPU3
// across the sockets from mlx5_0 (SYS), and the run says so, naming the
// host's nearer mlx5_1; a pod on both rails pairs each GPU with its
// nearest rail.
func TestAffinityOfEachGPU(t *testing.T) {
	b, _ := newTestBackend(t, testScenario())
	b.disc = remote.Discovery{Exec: recordedVM("../../../nic/testdata/sysfs/cx7-roce-gpu"),
		Key: func(endpoint.Endpoint) string { return "pod p" }, Prefix: "kube"}
	var progress strings.Builder
	b.opts.Progress = &progress
	pod := statusPod(t, "network-status-cx7-rails.json")
	ep := endpoint.Endpoint{Name: "a-0", GPUs: 4, ResolveDevice: true, Placement: &endpoint.Placement{Networks: []string{"rail-0"}}}
	for _, c := range []struct {
		nets []string
		want string
		warn bool
	}{
		{[]string{"rail-0"}, "GPU0-mlx5_0=PIX> GPU1-mlx5_0=PXB> GPU2-mlx5_0=SYS>mlx5_1 GPU3-mlx5_0=SYS>mlx5_1", true},
		{[]string{"rail-0", "rail-1"}, "GPU0-mlx5_0=PIX> GPU1-mlx5_0=PXB> GPU2-mlx5_1=PIX> GPU3-mlx5_1=PXB>", false},
	} {
		progress.Reset()
		ep.Placement.Networks = c.nets
		got, err := b.settle(context.Background(), ep, pod)
		if err != nil {
			t.Fatal(err)
		}
		var rels []string
		for _, a := range got.Affinity {
			rels = append(rels, a.GPU+"-"+a.Device+"="+a.Relation+">"+a.Nearest)
		}
		if strings.Join(rels, " ") != c.want {
			t.Errorf("%v: affinity %v, want %s", c.nets, rels, c.want)
		}
		warned := strings.Contains(progress.String(), "GPU2 and mlx5_0 are SYS apart (across the CPU sockets: expect about half the bandwidth); the host's mlx5_1 is PIX to it")
		if warned != c.warn {
			t.Errorf("%v: SYS warning %v in %q", c.nets, warned, progress.String())
		}
	}
}
