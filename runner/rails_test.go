package runner

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// ${rails:…} becomes the pod's other rails with an RDMA device, each as
// ",dev:port" (a rail without one is left out, not the whole list); a
// pod whose rails were not found gives "" (its data device alone).
func TestSubstituteRails(t *testing.T) {
	gid := 1
	eps := map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Device: "rxe0", Port: 1, GIDIndex: &gid, Rails: []endpoint.Rail{
			{Network: "r0", Device: "rxe0", Port: 1}, {Network: "r1", Device: "rxe1", Port: 1},
			{Network: "r2", NoDevice: "no RDMA device serves net3"}, {Network: "r3", Device: "mlx5_3"}}},
		"b-0": {Name: "b-0", Device: "rxe0", Port: 1, GIDIndex: &gid},
	}
	s := newSubstituter(eps, "", "r", "/o")
	_, env, err := s.command(plan.PlannedCommand{Env: map[string]string{
		"NCCL_IB_HCA": "=${dev:a-0}:${port:a-0}${rails:a-0},${dev:b-0}:${port:b-0}${rails:b-0}"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := env["NCCL_IB_HCA"], "=rxe0:1,rxe1:1,mlx5_3:1,rxe0:1"; got != want {
		t.Errorf("NCCL_IB_HCA %q, want %q", got, want)
	}
}

// A leg on rail 1 gets each pod's rail-1 device, port, GID and address.
func TestSubstituteRailPlaceholders(t *testing.T) {
	g1, g2 := 1, 2
	eps := map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Device: "rxe0", Rails: []endpoint.Rail{{Device: "rxe0"}, {Device: "rxe1", Port: 1, GIDIndex: &g2, Address: "10.9.1.1"}}},
		"b-0": {Name: "b-0", Device: "rxe0", Rails: []endpoint.Rail{{Device: "rxe0"}, {Device: "rxe1", Port: 1, GIDIndex: &g1, Address: "10.9.1.2"}}},
	}
	s := newSubstituter(eps, "", "r", "/o")
	argv, _, err := s.command(plan.PlannedCommand{Argv: []string{"ib_write_bw", "-d", "${dev:a-0#1}", "-i", "${port:a-0#1}", "-x", "${gid:a-0#1}", "${addr:b-0#1}"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(argv, " "); got != "ib_write_bw -d rxe1 -i 1 -x 2 10.9.1.2" {
		t.Errorf("argv %q", got)
	}
}

// A rail leg whose pods lack that rail's RDMA device is skipped with why,
// never run on another device or without the server's address.
func TestRailLegSkippedWithoutItsDevice(t *testing.T) {
	eps := map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Rails: []endpoint.Rail{{Device: "rxe0"}, {Network: "bench/rail-b", NoDevice: "no RDMA device has a GID of 10.9.1.1"}}},
		"b-0": {Name: "b-0", Rails: []endpoint.Rail{{Device: "rxe0"}, {Device: "rxe1"}}},
		"c-0": {Name: "c-0"},
	}
	leg := plan.Leg{Rail: 1, Commands: []plan.PlannedCommand{{Endpoint: "b-0"}, {Endpoint: "a-0"}}}
	if skip, why := railSkip(eps, leg); !skip || !strings.Contains(why, "a-0") || !strings.Contains(why, "GID of 10.9.1.1") {
		t.Errorf("skip %v %q", skip, why)
	}
	leg.Commands[1].Endpoint = "c-0"
	if skip, why := railSkip(eps, leg); !skip || !strings.Contains(why, "c-0 has no rail 1") {
		t.Errorf("skip %v %q", skip, why)
	}
	leg.Rail = 0
	if skip, _ := railSkip(eps, leg); skip {
		t.Error("rail 0 is the data network: not a rail skip")
	}
}

// The launcher names every rail's device to NCCL from discovery, and
// nothing under Google's gIB plugin.
func TestNCCLDiscoveryVars(t *testing.T) {
	eps := []endpoint.Endpoint{
		{Name: "a-0", Interface: "net1", Device: "mlx5_10", Rails: []endpoint.Rail{{Device: "mlx5_10"}, {Device: "mlx5_11"}}},
		{Name: "b-0", Interface: "net1", Device: "mlx5_10"},
	}
	got := ncclDiscoveryVars(eps, nil)
	if strings.Join(got["NCCL_IB_HCA"], ",") != "mlx5_10,mlx5_11" || strings.Join(got["NCCL_SOCKET_IFNAME"], ",") != "net1" {
		t.Errorf("%v", got)
	}
	if got := ncclDiscoveryVars(eps, map[string]string{"NCCL_NET": "gIB"}); got != nil {
		t.Errorf("under gIB: %v", got)
	}
}

// A result carries the GPU↔NIC pairs of its endpoints, and says where one
// is SYS apart; a rail leg carries none (the pairs are the data NIC's).
func TestResultAffinity(t *testing.T) {
	r := &run{endpoints: map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Affinity: []endpoint.GPUNIC{{GPU: "GPU0", Device: "mlx5_0", Relation: "PIX"}}},
		"b-0": {Name: "b-0", Affinity: []endpoint.GPUNIC{{GPU: "GPU2", Device: "mlx5_0", Relation: "SYS", Nearest: "mlx5_1", NearestRelation: "PIX"}}},
	}}
	pairs, note := r.legAffinity(plan.Leg{From: "a-0", To: "b-0"})
	if len(pairs) != 2 || pairs[1].Endpoint != "b-0" || pairs[1].Relation != "SYS" {
		t.Errorf("%+v", pairs)
	}
	if !strings.Contains(note, "b-0: GPU2 and mlx5_0 are SYS apart") || !strings.Contains(note, "the host's mlx5_1 is PIX to GPU2") {
		t.Errorf("note %q", note)
	}
	if pairs, _ := r.legAffinity(plan.Leg{From: "a-0", To: "b-0", Rail: 1}); pairs != nil {
		t.Errorf("rail leg: %+v", pairs)
	}
}

// report.json lists each endpoint's rails beside its data device.
func TestEndpointInfoHasRails(t *testing.T) {
	g := 2
	info := endpointInfo(endpoint.Endpoint{Name: "a-0", Device: "rxe0", Rails: []endpoint.Rail{
		{Network: "bench/rail-a", Interface: "eth0", Device: "rxe0"},
		{Network: "bench/rail-b", Interface: "eth2", Address: "10.9.1.1", Device: "rxe1", Port: 1, GIDIndex: &g, RateBps: 2.5e9}}})
	if len(info.Rails) != 2 || info.Rails[1].Device != "rxe1" || *info.Rails[1].GIDIndex != 2 || info.Rails[1].RateBps != 2.5e9 || info.Device != "rxe0" {
		t.Errorf("%+v", info)
	}
}

// topo4x4 is a 4-GPU, 4-NIC host where GPU i is PIX to NIC i, the
// others on its socket NODE, across it SYS.
const topo4x4 = "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tNIC2\tNIC3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n" +
	"GPU0\t X \tNV18\tNV18\tNV18\tPIX\tNODE\tSYS\tSYS\t0-47\t0\t\tN/A\n" +
	"GPU1\tNV18\t X \tNV18\tNV18\tNODE\tPIX\tSYS\tSYS\t0-47\t0\t\tN/A\n" +
	"GPU2\tNV18\tNV18\t X \tNV18\tSYS\tSYS\tPIX\tNODE\t48-95\t1\t\tN/A\n" +
	"GPU3\tNV18\tNV18\tNV18\t X \tSYS\tSYS\tNODE\tPIX\t48-95\t1\t\tN/A\n" +
	"\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n  NIC2: mlx5_2\n  NIC3: mlx5_3\n"

// railedPod is a pod whose rails are devices, in network order, with the
// affinity its machine's matrix gives (as the backends fill it).
func railedPod(t *testing.T, name, topo string, devices ...string) endpoint.Endpoint {
	t.Helper()
	gpus, err := nic.ParseTopo(topo)
	if err != nil {
		t.Fatal(err)
	}
	ep := endpoint.Endpoint{Name: name, Device: devices[0], Port: 1, GPUs: len(gpus)}
	for i, d := range devices {
		ep.Rails = append(ep.Rails, endpoint.Rail{Network: "rail" + strconv.Itoa(i), Device: d, Port: 1 + i%2})
	}
	for _, p := range (&nic.Inventory{GPUs: gpus}).Affinity(len(gpus), devices) {
		ep.Affinity = append(ep.Affinity, endpoint.GPUNIC(p))
	}
	return ep
}

// ${nic:EP@G} is GPU G's nearest rail with its port: GPU i's own NIC on a
// host whose GPUs and NICs are in step; on a real eight-H100 host
// (NVIDIA/nccl#1453) whose NICs are numbered the other way round (GPU0 is
// PIX to NIC8), the PIX one, not rail G; and every rail where the matrix
// does not list the GPU.
func TestSubstituteNearestNICOfEachGPU(t *testing.T) {
	h100, err := os.ReadFile("../nic/testdata/topo-h100x8-nccl1453.txt")
	if err != nil {
		t.Fatal(err)
	}
	unlisted := railedPod(t, "c-0", topo4x4, "mlx5_0", "mlx5_1")
	unlisted.Affinity = unlisted.Affinity[:1] // GPU1 not in the matrix
	eps := map[string]endpoint.Endpoint{
		"a-0": railedPod(t, "a-0", topo4x4, "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"),
		"b-0": railedPod(t, "b-0", string(h100), "NIC1", "NIC2", "NIC3", "NIC4", "NIC5", "NIC6", "NIC7", "NIC8"),
		"c-0": unlisted,
	}
	s := newSubstituter(eps, "", "r", "/o")
	for placeholder, want := range map[string]string{
		"${nic:a-0@0}": "mlx5_0:1", "${nic:a-0@1}": "mlx5_1:2", "${nic:a-0@2}": "mlx5_2:1", "${nic:a-0@3}": "mlx5_3:2",
		"${nic:b-0@0}": "NIC8:2", "${nic:b-0@1}": "NIC7:1", "${nic:b-0@3}": "NIC5:1", "${nic:b-0@7}": "NIC1:1",
		"${nic:c-0@0}": "mlx5_0:1", "${nic:c-0@1}": "mlx5_0:1,mlx5_1:2",
	} {
		_, env, err := s.command(plan.PlannedCommand{Env: map[string]string{"UCX_NET_DEVICES": placeholder}})
		if err != nil {
			t.Fatal(err)
		}
		if got := env["UCX_NET_DEVICES"]; got != want {
			t.Errorf("%s = %q, want %q", placeholder, got, want)
		}
	}
}
