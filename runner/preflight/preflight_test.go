package preflight

import (
	"os"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

func facts(t *testing.T, file, tree string) Facts {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	f := ParseFacts(string(b))
	if tree != "" {
		inv, err := nic.Discover(nic.Options{Root: "../../nic/testdata/sysfs/" + tree, NoGPU: true})
		if err != nil {
			t.Fatal(err)
		}
		f.Inv = inv
	} else {
		f.Inv = &nic.Inventory{}
	}
	return f
}

func byID(cs []schema.PreflightCheck) map[string]schema.PreflightCheck {
	m := map[string]schema.PreflightCheck{}
	for _, c := range cs {
		m[c.ID] = c
	}
	return m
}

func TestParseFactsRxeVM(t *testing.T) {
	f := facts(t, "facts-rxe-vm.txt", "")
	if f.Memlock == nil || *f.Memlock != 8192 || f.UID == nil || *f.UID != 0 {
		t.Errorf("memlock/uid: %v %v", f.Memlock, f.UID)
	}
	if !hasIPCLock(f) || !f.DevDir || f.DevFiles["uverbs0"] != "rw" || f.Uverbs["rxe0"] != "uverbs0" {
		t.Errorf("caps/dev: %+v", f)
	}
	if f.ActiveMTU["rxe0/1"] != 4096 || f.Kernel != "6.1.0-56-amd64" || f.GPUSmi != -1 {
		t.Errorf("mtu/kernel/gpu: %+v", f)
	}
}

func TestParseFactsGarbage(t *testing.T) {
	f := ParseFacts("memlock=lots\ncapeff=zz\n=\nibv_active_mtu=4096\npcie=x\n\x00")
	if f.Memlock != nil || f.CapEff != nil || len(f.ActiveMTU) != 0 {
		t.Errorf("garbage parsed: %+v", f)
	}
}

func TestEvaluateRxeVMPasses(t *testing.T) {
	gid := 1
	f := facts(t, "facts-rxe-vm.txt", "rxe-vm")
	cs := byID(Evaluate(f, Want{Endpoint: "server-0", Device: "rxe0", GIDIndex: &gid, Address: "10.9.0.1", RDMA: true}))
	for _, id := range []string{RDMADevice, PortActive, LinkLayer, DevInfiniband, Memlock, MTUMatch, RoCEGID, PCIeLinkCheck} {
		if c, ok := cs[id]; !ok || c.Status != schema.PreflightPass {
			t.Errorf("%s: %+v", id, c)
		}
	}
	if !strings.Contains(cs[Memlock].Evidence, "CAP_IPC_LOCK is held") {
		t.Errorf("memlock evidence: %s", cs[Memlock].Evidence)
	}
}

func TestEvaluateFailures(t *testing.T) {
	gid := 1
	base := Want{Endpoint: "e", Device: "rxe0", GIDIndex: &gid, Address: "10.9.0.1", RDMA: true}
	cases := []struct {
		name  string
		edit  func(*Facts, *Want)
		id    string
		want  string
		words string
	}{
		{"wrong device", func(f *Facts, w *Want) { w.Device = "rxe9" }, RDMADevice, schema.PreflightFail, `"rxe9" not found; this endpoint has rxe0 (port 1 ACTIVE)`},
		{"no rdma", func(f *Facts, w *Want) { f.Inv = &nic.Inventory{} }, RDMADevice, schema.PreflightFail, "no RDMA device"},
		{"port down", func(f *Facts, w *Want) { f.Inv.Devices[0].Ports[0].State = "DOWN" }, PortActive, schema.PreflightFail, "state DOWN"},
		{"no devdir", func(f *Facts, w *Want) { f.DevDir = false }, DevInfiniband, schema.PreflightFail, "does not exist"},
		{"read only", func(f *Facts, w *Want) { f.DevFiles["uverbs0"] = "r" }, DevInfiniband, schema.PreflightFail, "r only"},
		{"low memlock", func(f *Facts, w *Want) { c := uint64(0); f.CapEff = &c }, Memlock, schema.PreflightFail, "ulimit -l 8192 KiB"},
		{"unlimited", func(f *Facts, w *Want) { n := int64(-1); f.Memlock = &n }, Memlock, schema.PreflightPass, "unlimited"},
		{"pod no ipc", func(f *Facts, w *Want) { c := uint64(0); f.CapEff = &c; w.Pod = true }, IPCLock, schema.PreflightFail, "IPC_LOCK not held"},
		{"mtu above netdev", func(f *Facts, w *Want) { f.Inv.Devices[0].Ports[0].ActiveMTU = 1024 }, MTUMatch, schema.PreflightFail, "active IB MTU 4096"},
		{"mtu below netdev", func(f *Facts, w *Want) { f.ActiveMTU["rxe0/1"] = 1024 }, MTUMatch, schema.PreflightWarn, "smaller packets"},
		{"mtu unknown", func(f *Facts, w *Want) { delete(f.ActiveMTU, "rxe0/1"); f.IbvDevinfo = "missing" }, MTUMatch, schema.PreflightWarn, "ibv_devinfo: missing"},
		{"gid wrong addr", func(f *Facts, w *Want) { w.Address = "10.9.9.9" }, RoCEGID, schema.PreflightFail, "no RoCE v2 GID of 10.9.9.9"},
		{"gid v1", func(f *Facts, w *Want) { g := 0; w.GIDIndex = &g }, RoCEGID, schema.PreflightWarn, "GID index 0"},
		{"gid empty", func(f *Facts, w *Want) { g := 7; w.GIDIndex = &g }, RoCEGID, schema.PreflightFail, "7, which is empty"},
		{"gpus", func(f *Facts, w *Want) { w.GPUs = 2; w.Pod = true }, GPUCount, schema.PreflightFail, "0 GPU(s)"},
		{"gpus on a host", func(f *Facts, w *Want) { w.GPUs = 2 }, GPUCount, schema.PreflightFail, "0 GPU(s)"},
		{"gpudirect", func(f *Facts, w *Want) { w.GPUDirect = true; w.Pod = true }, GPUDirect, schema.PreflightFail, "nvidia_peermem not loaded"},
		{"peermem", func(f *Facts, w *Want) { w.GPUDirect = true; f.PeerMem = "nvidia_peermem" }, GPUDirect, schema.PreflightPass, "loaded"},
		{"dmabuf", func(f *Facts, w *Want) {
			w.GPUDirect = true
			f.NvidiaVersion = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15"
		}, GPUDirect, schema.PreflightPass, "dma-buf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := facts(t, "facts-rxe-vm.txt", "rxe-vm")
			w := base
			tc.edit(&f, &w)
			c, ok := byID(Evaluate(f, w))[tc.id]
			if !ok || c.Status != tc.want || !strings.Contains(c.Evidence, tc.words) {
				t.Fatalf("%s: got %+v, want %s with %q", tc.id, c, tc.want, tc.words)
			}
			if c.Status == schema.PreflightFail && c.Fix == "" {
				t.Errorf("a fail without a fix: %+v", c)
			}
		})
	}
}

func TestEvaluateNoRDMAHost(t *testing.T) {
	f := facts(t, "facts-no-rdma.txt", "")
	eps := EvaluateAll([]Input{{Want: Want{Endpoint: "a-0", RDMA: true}, Facts: f}, {Want: Want{Endpoint: "b-0"}, Facts: f}})
	c, doomed := Doomed(eps[0], Needs{RDMA: true})
	if !doomed || c.ID != RDMADevice || len(eps[1].Checks) != 0 {
		t.Fatalf("got %+v", eps)
	}
	if _, doomed := Doomed(eps[0], Needs{GPU: true}); doomed {
		t.Error("an RDMA failure dooms a GPU-only test")
	}
}

func TestPeerMTUMismatch(t *testing.T) {
	a := facts(t, "facts-rxe-vm.txt", "rxe-vm")
	b := facts(t, "facts-rxe-vm.txt", "rxe-vm")
	b.Inv.Devices[0].Ports[0].NetdevMTU, b.Inv.Devices[0].Ports[0].ActiveMTU = 1500, 1024
	b.ActiveMTU["rxe0/1"] = 1024
	eps := EvaluateAll([]Input{
		{Want: Want{Endpoint: "server-0", Device: "rxe0", RDMA: true}, Facts: a},
		{Want: Want{Endpoint: "client-0", Device: "rxe0", RDMA: true}, Facts: b},
	})
	c := byID(eps[0].Checks)[MTUMatch]
	if c.Status != schema.PreflightFail || !strings.Contains(c.Evidence, "client-0 has active IB MTU 1024 (netdev MTU 1500)") {
		t.Fatalf("server-0 mtu-match: %+v", c)
	}
}

func TestPCIeDowntrained(t *testing.T) {
	f := facts(t, "facts-rxe-vm.txt", "cx7-roce-gpu")
	f.PCIe["mlx5_1"] = &PCIeLink{Speed: "16.0 GT/s PCIe", Width: 16, MaxSpeed: "32.0 GT/s PCIe", MaxWidth: 16}
	f.PCIe["mlx5_0"] = &PCIeLink{Speed: "32.0 GT/s PCIe", Width: 16, MaxSpeed: "32.0 GT/s PCIe", MaxWidth: 16}
	if c := pcieLink(f, &f.Inv.Devices[1]); c.Status != schema.PreflightWarn || !strings.Contains(c.Evidence, "downtrained") {
		t.Errorf("mlx5_1: %+v", c)
	}
	if c := pcieLink(f, &f.Inv.Devices[0]); c.Status != schema.PreflightPass {
		t.Errorf("mlx5_0: %+v", c)
	}
}

func FuzzParseFacts(f *testing.F) {
	f.Add("memlock=unlimited\ncapeff=ff\nibv_dev=x\nibv_port=1\nibv_active_mtu=1024 (3)\npcie=a max_link_width 16")
	f.Fuzz(func(t *testing.T, s string) { _ = ParseFacts(s) })
}

func TestKernelAtLeastRC(t *testing.T) {
	for k, want := range map[string]bool{"6.8-rc1": true, "5.12.0-1-amd64": true, "5.4.0": false, "5.11-rc7": false, "6": false, "x.y": false} {
		if got := kernelAtLeast(k, 5, 12); got != want {
			t.Errorf("kernelAtLeast(%q) = %v, want %v", k, got, want)
		}
	}
}

// On EKS, NCCL between nodes needs aws-ofi-nccl: preflight names it, and
// its failure dooms only such NCCL tests.
func TestNCCLNetPlugin(t *testing.T) {
	f := ParseFacts("ncclnet=/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\nncclnet=/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\nkernel=6.1\n")
	cs := Evaluate(f, Want{Endpoint: "a-0", NCCLNet: true})
	if len(cs) != 1 || cs[0].ID != NCCLNetPlugin || cs[0].Status != schema.PreflightPass || !strings.Contains(cs[0].Evidence, "libnccl-net-ofi.so") {
		t.Fatalf("%+v", cs)
	}
	cs = Evaluate(ParseFacts("kernel=6.1\n"), Want{Endpoint: "a-0", NCCLNet: true})
	if len(cs) != 1 || cs[0].Status != schema.PreflightFail || cs[0].Dooms != schema.DoomsNCCLNet || !strings.Contains(cs[0].Fix, "aws-ofi-nccl") {
		t.Fatalf("%+v", cs)
	}
	ep := schema.PreflightEndpoint{Endpoint: "a-0", Checks: cs}
	if _, doomed := Doomed(ep, Needs{RDMA: true, GPU: true}); doomed {
		t.Error("a missing NCCL net plugin dooms tests that are not NCCL between nodes")
	}
	if c, doomed := Doomed(ep, Needs{RDMA: true, GPU: true, NCCLNet: true}); !doomed || c.ID != NCCLNetPlugin {
		t.Error("a missing NCCL net plugin must doom NCCL between nodes on EKS")
	}
}

// A tool probe: the nixlbench ETCD-runtime check passes, fails (and then
// dooms only the tests that need it, by id), or cannot tell (a script
// wrapper: a warning); the probe script's sections split by id.
func TestToolProbes(t *testing.T) {
	ids := func(ps []tools.Probe) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.ID+"/"+p.Backend)
		}
		return strings.Join(s, " ")
	}
	all := tools.ProbesOf(&scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{Runtime: "ETCD"}}, "nixlbench")
	if got, want := ids(all), "binary-nixlbench/ nixlbench-etcd/ nixl-plugin-UCX/UCX ucx-transports-rdma/UCX"; got != want {
		t.Fatalf("probes of an ETCD nixlbench test: %s, want %s", got, want)
	}
	asio := tools.ProbesOf(&scenarios.Test{Tool: "nixlbench", Requires: "tcp", Args: scenarios.Args{Runtime: "ASIO", Backends: []string{"UCX", "UCCL"}, TargetSeg: "VRAM"}}, "nixlbench")
	if got, want := ids(asio), "binary-nixlbench/ nixl-plugin-UCX/UCX ucx-transports-cuda/UCX nixl-plugin-UCCL/UCCL"; got != want {
		t.Fatalf("an ASIO VRAM test over tcp: %s, want %s", got, want)
	}
	probes := all[1:2]
	out := ParseProbes("junk before\n@@rdmabench-probe nixlbench-etcd\nnixlbench=/usr/local/bin/nixlbench\netcd=no\n@@rdmabench-probe other\nx=1\n")
	if out["other"] != "x=1\n" || !strings.Contains(out[tools.NixlEtcdProbe], "etcd=no") {
		t.Fatalf("ParseProbes: %q", out)
	}
	w := Want{Endpoint: "decode-0", Probes: probes}
	cs := Evaluate(Facts{Probes: out}, w)
	if len(cs) != 1 || cs[0].Status != schema.PreflightFail || cs[0].Dooms != schema.DoomsTool ||
		!strings.Contains(cs[0].Evidence, "/usr/local/bin/nixlbench was built without the ETCD runtime") || !strings.Contains(cs[0].Fix, "args.runtime: ASIO") {
		t.Fatalf("checks %+v", cs)
	}
	ep := schema.PreflightEndpoint{Endpoint: "decode-0", Checks: cs}
	if _, doomed := Doomed(ep, Needs{RDMA: true}); doomed {
		t.Error("a failed nixlbench probe dooms an RDMA test that does not need it")
	}
	if c, doomed := Doomed(ep, Needs{Probes: []string{tools.NixlEtcdProbe}}); !doomed || c.ID != tools.NixlEtcdProbe {
		t.Error("a failed nixlbench probe does not doom the test that needs it")
	}
	for raw, want := range map[string]string{
		"nixlbench=/opt/nb\netcd=yes\n":            schema.PreflightPass,
		"nixlbench=/opt/nb\netcd=script\n":         schema.PreflightWarn,
		"nixlbench=missing\n":                      schema.PreflightFail,
		"nixlbench=/bin/true\netcd=notnixlbench\n": schema.PreflightFail,
		"nixlbench=/opt/nb\netcd=unreadable\n":     schema.PreflightWarn,
		"":                                         schema.PreflightWarn,
	} {
		if c := Evaluate(Facts{Probes: map[string]string{tools.NixlEtcdProbe: raw}}, w); c[0].Status != want {
			t.Errorf("%q: %s (%s), want %s", raw, c[0].Status, c[0].Evidence, want)
		}
	}
	if c := Evaluate(Facts{}, w); c[0].Status != schema.PreflightWarn {
		t.Errorf("a probe that did not run: %+v", c[0])
	}
}

// TestRoCEGIDOfAnIPv6DataAddress: an endpoint whose data address is IPv6
// has a RoCE v2 GID of it (the address itself, not IPv4-mapped): preflight
// passes it instead of dooming every RDMA test.
func TestRoCEGIDOfAnIPv6DataAddress(t *testing.T) {
	f := facts(t, "facts-rxe-vm.txt", "rxe-vm-rails")
	gid := 3
	c := byID(Evaluate(f, Want{Endpoint: "e", Device: "rxe1", GIDIndex: &gid, Address: "fd00:9:1::1", RDMA: true}))[RoCEGID]
	if c.Status != schema.PreflightPass || !strings.Contains(c.Evidence, "GID 3") {
		t.Fatalf("got %+v, want a pass on GID 3", c)
	}
}

// A GPU test on a host (local, ssh) with no GPU: no GPU dooms it (the
// reason it is skipped), the advice is a host's (no pod resource, no
// image), its tools' checks are said once (binary-X and nccl-loads-X
// read the same missing binary), and gpudirect is not checked on top.
func TestGPUTestOnAHostWithoutGPU(t *testing.T) {
	w := Want{Endpoint: "gpu-0", GPU: true, GPUs: 1, GPUDirect: true,
		Probes: tools.ProbesOf(&scenarios.Test{Tool: "nccl", Args: scenarios.Args{Collective: "all_reduce"}}, "nccl")}
	f := Facts{GPUSmi: -1, Probes: map[string]string{"binary-all_reduce_perf": "missing\n", "nccl-loads-all_reduce_perf": "nccl=missing\n"}}
	cs := byID(Evaluate(f, w))
	if c := cs[GPUCount]; c.Status != schema.PreflightFail || c.Dooms != schema.DoomsGPU || strings.Contains(c.Fix, "nvidia.com/gpu") {
		t.Errorf("gpu-count %+v: want a failure that dooms GPU tests, with a host's fix", c)
	}
	if c, ok := cs[GPUDirect]; ok {
		t.Errorf("gpudirect checked with no GPU: %+v", c)
	}
	if c := cs["binary-all_reduce_perf"]; c.Status != schema.PreflightFail || strings.Contains(c.Fix, "image") {
		t.Errorf("binary check %+v: want a host's fix (no image)", c)
	}
	if c, ok := cs["nccl-loads-all_reduce_perf"]; ok {
		t.Errorf("nccl-loads repeats the missing binary: %+v", c)
	}
}
