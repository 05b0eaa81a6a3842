package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

func TestEndpointsPerBackend(t *testing.T) {
	gid := 3
	s := scenario([]scenarios.Pool{
		{Name: "prefill", Replicas: intp(3), Hosts: []string{"h1", "h2"}, Devices: []string{"mlx5_0", "mlx5_1"}, GPUs: scenarios.GPUs(8),
			Env: map[string]string{"NCCL_IB_HCA": "mlx5", "UCX_LOG_LEVEL": "info"}},
	})
	s.Defaults = scenarios.Defaults{Device: "mlx5_9", GIDIndex: &gid, Env: map[string]string{"UCX_LOG_LEVEL": "warn", "A": "1"}}
	s.Hosts = []scenarios.Host{{Name: "h1", Address: "10.0.0.1", DataAddress: "192.168.1.1"}, {Name: "h2", Address: "10.0.0.2"}}

	want := map[string][]endpoint.Endpoint{
		scenarios.BackendLocal: {
			{Name: "prefill-0", Pool: "prefill", Index: 0, Device: "mlx5_0", Address: "127.0.0.1"},
			{Name: "prefill-1", Pool: "prefill", Index: 1, Device: "mlx5_1", Address: "127.0.0.1"},
			{Name: "prefill-2", Pool: "prefill", Index: 2, Device: "mlx5_0", Address: "127.0.0.1"},
		},
		scenarios.BackendSSH: {
			{Name: "prefill-0", Host: "h1", Device: "mlx5_0", Address: "192.168.1.1"},
			{Name: "prefill-1", Host: "h2", Device: "mlx5_1", Address: "10.0.0.2"},
			{Name: "prefill-2", Host: "h1", Device: "mlx5_0", Address: "192.168.1.1"},
		},
		scenarios.BackendKube: {
			{Name: "prefill-0", Device: "mlx5_0", Address: "${addr:prefill-0}"},
			{Name: "prefill-1", Device: "mlx5_1", Address: "${addr:prefill-1}"},
			{Name: "prefill-2", Device: "mlx5_0", Address: "${addr:prefill-2}"},
		},
	}
	for _, b := range []string{scenarios.BackendLocal, scenarios.BackendSSH, scenarios.BackendKube} {
		s.Backend = b
		p, err := compileHeld(s, CompileOptions{})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if p.Backend != b || len(p.Endpoints) != 3 {
			t.Fatalf("%s: backend %q, %d endpoints", b, p.Backend, len(p.Endpoints))
		}
		for i, ep := range p.Endpoints {
			w := want[b][i]
			if ep.Name != w.Name || ep.Host != w.Host || ep.Device != w.Device || ep.Address != w.Address || ep.Index != i || ep.Pool != "prefill" {
				t.Errorf("%s endpoint %d: %+v, want %+v", b, i, ep, w)
			}
			if ep.GPUs != 8 || ep.GIDIndex == nil || *ep.GIDIndex != 3 {
				t.Errorf("%s endpoint %d: gpus %d gid %v", b, i, ep.GPUs, ep.GIDIndex)
			}
			if ep.Env["UCX_LOG_LEVEL"] != "info" || ep.Env["A"] != "1" || ep.Env["NCCL_IB_HCA"] != "mlx5" {
				t.Errorf("%s endpoint %d env %v: pool env must win over defaults", b, i, ep.Env)
			}
		}
	}
}

func TestAutoDeviceIsResolved(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("a", 2)})
	s.Defaults.Device = "auto"
	p, err := compileHeld(s, CompileOptions{ResolveDevice: func(ep endpoint.Endpoint) string { return "rxe" + ep.Name[len(ep.Name)-1:] }})
	if err != nil {
		t.Fatal(err)
	}
	if p.Endpoints[0].Device != "rxe0" || p.Endpoints[1].Device != "rxe1" {
		t.Fatalf("devices %q %q", p.Endpoints[0].Device, p.Endpoints[1].Device)
	}
	p, _ = compileHeld(s, CompileOptions{})
	if p.Endpoints[0].Device != "" {
		t.Fatalf("auto without discovery must leave the device to the tool, got %q", p.Endpoints[0].Device)
	}
}

func TestSkipsRDMATestsWithoutRDMA(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("a", 1), pool("b", 1)},
		scenarios.Test{Name: "wbw", Tool: "ib_write_bw", From: "a", To: "b"},
		scenarios.Test{Name: "ucx-tcp", Tool: "ucx_perftest", From: "a", To: "b", Args: scenarios.Args{Transports: "tcp"}},
		scenarios.Test{Name: "ucx-rc", Tool: "ucx_perftest", From: "a", To: "b", Args: scenarios.Args{Transports: "rc,self"}},
		scenarios.Test{Name: "iperf", Tool: "iperf3", From: "a", To: "b"},
		scenarios.Test{Name: "kv", Tool: "nixlbench", From: "a", To: "b"},
	)
	noRDMAonB := func(ep endpoint.Endpoint) bool { return ep.Pool != "b" }
	p, err := compileHeld(s, CompileOptions{HasRDMA: noRDMAonB})
	if err != nil {
		t.Fatal(err)
	}
	var planned []string
	for _, r := range p.Rounds {
		planned = append(planned, r.Test)
	}
	if strings.Join(planned, ",") != "ucx-tcp,iperf" {
		t.Fatalf("planned %v, want ucx-tcp and iperf only", planned)
	}
	if len(p.Skipped) != 3 || p.Skipped[0].Test != "wbw" || p.Skipped[1].Test != "ucx-rc" || p.Skipped[2].Test != "kv" {
		t.Fatalf("skipped %+v", p.Skipped)
	}
	if !strings.Contains(p.Skipped[0].Reason, "endpoint b-0 has none") {
		t.Fatalf("reason %q does not name the endpoint", p.Skipped[0].Reason)
	}
	if p.NeedsEtcd {
		t.Fatal("NeedsEtcd with the nixlbench test skipped")
	}
}

func TestSkipsMissingBinaryWithHint(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("a", 2)},
		scenarios.Test{Name: "rp", Tool: "rping", From: "a"},
		scenarios.Test{Name: "ar", Tool: "nccl", From: "a", Args: scenarios.Args{Collective: "all_gather"}},
	)
	var asked []string
	p, err := compileHeld(s, CompileOptions{HasBinary: func(_ endpoint.Endpoint, bin string) bool {
		asked = append(asked, bin)
		return bin != "rping"
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0].Reason, "rdmacm-utils") {
		t.Fatalf("skipped %+v", p.Skipped)
	}
	if !strings.Contains(strings.Join(asked, ","), "all_gather_perf") || !strings.Contains(strings.Join(asked, ","), "mpirun") {
		t.Fatalf("nccl binary not checked by collective: asked %v", asked)
	}
}

func TestTooFewEndpointsIsSkipped(t *testing.T) {
	p, err := compileHeld(scenario([]scenarios.Pool{pool("a", 1)},
		scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "a", Pattern: "all-to-all"}), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rounds) != 0 || len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0].Reason, "add replicas") {
		t.Fatalf("rounds %d skipped %+v", len(p.Rounds), p.Skipped)
	}
}

func TestNCCLIsOneJobOverAllRanks(t *testing.T) {
	pools := []scenarios.Pool{{Name: "decode", Replicas: intp(2), GPUs: scenarios.GPUs(4)}, {Name: "prefill", Replicas: intp(2), GPUs: scenarios.GPUs(4)}}
	p := compileOne(t, pools, scenarios.Test{Name: "sr", Tool: "nccl", From: "decode", To: "prefill",
		Args: scenarios.Args{Collective: "sendrecv"}, Env: map[string]string{"NCCL_DEBUG": "INFO"}})
	if len(p.Rounds) != 1 || len(p.Rounds[0].Jobs) != 1 {
		t.Fatalf("%d rounds", len(p.Rounds))
	}
	j := p.Rounds[0].Jobs[0]
	if j.ID != "sr/r0/16-ranks-decode-0..prefill-1" || j.Pattern != "" {
		t.Fatalf("job %s pattern %q", j.ID, j.Pattern)
	}
	l := j.Legs[0]
	if strings.Join(l.Ranks, ",") != "decode-0,decode-1,prefill-0,prefill-1" || len(l.Commands) != 1 {
		t.Fatalf("ranks %v, %d commands", l.Ranks, len(l.Commands))
	}
	c := l.Commands[0]
	want := "mpirun --allow-run-as-root -np 16 --map-by slot -H 127.0.0.1:16" +
		" -x NCCL_COMM_ID -x NCCL_DEBUG sendrecv_perf -b 8 -e 1073741824 -f 2 -g 1 -c 1 -J ${out}/nccl.json"
	if got := strings.Join(c.Argv, " "); got != want || c.Endpoint != "decode-0" || !c.Parse || c.Env["NCCL_DEBUG"] != "INFO" {
		t.Fatalf("command %s\n%q\nwant\n%q", c.Endpoint, got, want)
	}
}

func TestLegsPerSizeAndBackend(t *testing.T) {
	p := compileOne(t, []scenarios.Pool{pool("decode", 1), pool("prefill", 1)},
		scenarios.Test{Name: "kv", Tool: "nixlbench", From: "decode", To: "prefill",
			Args: scenarios.Args{Backends: []string{"UCX", "UCCL"}, Sizes: []scenarios.Size{size("4KiB"), size("1MiB")}}})
	if !p.NeedsEtcd {
		t.Fatal("NeedsEtcd false")
	}
	j := p.Rounds[0].Jobs[0]
	var got []string
	for _, l := range j.Legs {
		got = append(got, l.Variant+"|"+l.Backend+"|"+l.Commands[0].Argv[3])
		if want := "--benchmark_group=" + l.NixlGroup; l.Commands[0].Argv[3] != want || l.Commands[1].Argv[3] != want {
			t.Errorf("leg %s: the typed group %q is not the one on its command lines", l.Variant, l.NixlGroup)
		}
	}
	want := []string{
		"UCX/4096|UCX|--benchmark_group=rdmabench-${run}-kv-r0-decode-0-prefill-0-0",
		"UCX/1048576|UCX|--benchmark_group=rdmabench-${run}-kv-r0-decode-0-prefill-0-1",
		"UCCL/4096|UCCL|--benchmark_group=rdmabench-${run}-kv-r0-decode-0-prefill-0-2",
		"UCCL/1048576|UCCL|--benchmark_group=rdmabench-${run}-kv-r0-decode-0-prefill-0-3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("legs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := j.Legs[0].Commands; c[0].Role != tools.RoleInitiator || c[0].Endpoint != "decode-0" || c[1].Role != tools.RoleTarget {
		t.Fatalf("start order %+v", c)
	}
}

func TestTimeoutsAndRepetitions(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("a", 1), pool("b", 1)},
		scenarios.Test{Name: "derived", Tool: "iperf3", From: "a", To: "b", Args: scenarios.Args{Duration: dur("20s")}},
		scenarios.Test{Name: "own", Tool: "iperf3", From: "a", To: "b", Timeout: dur("2m"), Repetitions: intp(3)},
		scenarios.Test{Name: "sizes", Tool: "ib_write_bw", From: "a", To: "b", Args: scenarios.Args{Sizes: []scenarios.Size{size("4KiB"), size("1GiB")}}},
	)
	p, err := compileHeld(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]Job{}
	for _, r := range p.Rounds {
		jobs[r.Test] = r.Jobs[0]
	}
	if j := jobs["derived"]; j.TimeoutSec != 50 || j.Repetitions != 1 {
		t.Errorf("derived: %v s, %d reps", j.TimeoutSec, j.Repetitions)
	}
	if j := jobs["own"]; j.TimeoutSec != 120 || j.Repetitions != 3 {
		t.Errorf("own: %v s, %d reps", j.TimeoutSec, j.Repetitions)
	}
	// The largest leg bounds the job: 5000 × 1 GiB at 1 Gb/s.
	if j := jobs["sizes"]; j.TimeoutSec < 5000*(1<<30)/125e6 {
		t.Errorf("sizes: %v s is less than the 1 GiB leg needs", j.TimeoutSec)
	}
	s.Defaults.Timeout = dur("90s")
	p, _ = compileHeld(s, CompileOptions{})
	if p.Rounds[0].Jobs[0].TimeoutSec != 90 || p.Rounds[1].Jobs[0].TimeoutSec != 120 {
		t.Errorf("defaults.timeout: %v / %v", p.Rounds[0].Jobs[0].TimeoutSec, p.Rounds[1].Jobs[0].TimeoutSec)
	}
}

func TestCommandEnvLayers(t *testing.T) {
	s := scenario([]scenarios.Pool{{Name: "a", Replicas: intp(1), Env: map[string]string{"UCX_TLS": "rc", "P": "pool"}}, pool("b", 1)},
		scenarios.Test{Name: "u", Tool: "ucx_perftest", From: "a", To: "b", Env: map[string]string{"T": "test", "P": "test"},
			Args: scenarios.Args{Transports: "tcp"}})
	s.Defaults.Env = map[string]string{"D": "default", "P": "default"}
	p, err := compileHeld(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cli := p.Rounds[0].Jobs[0].Legs[0].Commands[1]
	want := map[string]string{"D": "default", "P": "test", "T": "test", "UCX_TLS": "tcp"}
	if len(cli.Env) != len(want) {
		t.Fatalf("env %v, want %v", cli.Env, want)
	}
	for k, v := range want {
		if cli.Env[k] != v {
			t.Fatalf("env %v, want %v", cli.Env, want)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *scenarios.Scenario
		want string
	}{
		{"unknown tool", scenario([]scenarios.Pool{pool("a", 2)}, scenarios.Test{Name: "x", Tool: "ib_write_bandwidth", From: "a", Pos: scenarios.Pos{Line: 7, Col: 5}}),
			`f.yaml:7:5: tests[0] (x): unknown tool "ib_write_bandwidth"`},
		{"unknown pool", scenario([]scenarios.Pool{pool("a", 2)}, scenarios.Test{Name: "x", Tool: "rping", From: "a", To: "zz"}),
			`f.yaml: tests[0] (x): to: pool "zz" is not defined`},
		{"unknown pattern", scenario([]scenarios.Pool{pool("a", 2)}, scenarios.Test{Name: "x", Tool: "rping", From: "a", Pattern: "mesh"}),
			`unknown pattern "mesh"`},
		{"ssh without hosts", func() *scenarios.Scenario {
			s := scenario([]scenarios.Pool{pool("a", 2)})
			s.Backend = scenarios.BackendSSH
			return s
		}(), "needs hosts"},
	} {
		tc.s.File = "f.yaml"
		_, err := compileHeld(tc.s, CompileOptions{})
		var pe *Error
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &pe) || pe.ExitCode() != 2 {
			t.Errorf("%s: got %v, want a Error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestPortOffset(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("a", 4)}, scenarios.Test{Name: "w", Tool: "ib_write_bw", From: "a"})
	p, err := compileHeld(s, CompileOptions{PortOffset: 100})
	if err != nil {
		t.Fatal(err)
	}
	jobs := p.Rounds[0].Jobs
	if len(jobs) != 2 || jobs[0].Legs[0].Commands[0].Port != 18615 || jobs[1].Legs[0].Commands[0].Port != 18616 {
		t.Fatalf("ports with offset 100: %+v", jobs)
	}
	if argv := jobs[1].Legs[0].Commands[1].Argv; strings.Join(argv, " ") != "ib_write_bw -i 1 -F --report_gbits -p 18616 ${addr:a-3}" {
		t.Fatalf("client argv %q", argv)
	}
}

// perRequest: one leg per backend and context length, each one request's
// KV as vLLM's NIXL connector reads it. Llama-3.1-8B in bf16, 16-token
// blocks, TP 1: a descriptor is 16 tokens × 8 KV heads × 128 × 2 bytes =
// 32 KiB; a 1024-token prompt fills 64 blocks of 2 × 32 layers of regions:
// 4096 descriptors, 128 MiB, in one READ.
func TestPerRequestLegs(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("decode", 1), pool("prefill", 1)},
		scenarios.Test{Name: "kv", Tool: "nixlbench", From: "decode", To: "prefill",
			Args: scenarios.Args{PerRequest: true, Backends: []string{"UCX", "LIBFABRIC"}, Op: "READ"}})
	s.Serving = &scenarios.Serving{Model: "llama-3.1-8b", ContextLengths: []int{1024, 8192}}
	p, err := compileHeld(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j := p.Rounds[0].Jobs[0]
	var got []string
	for _, l := range j.Legs {
		argv := strings.Join(l.Commands[0].Argv, " ")
		got = append(got, fmt.Sprintf("%s|%d", l.Variant, l.RequestTokens))
		for _, want := range []string{"--start_block_size=32768", "--max_block_size=32768"} {
			if !strings.Contains(argv, want) {
				t.Errorf("%s: %s missing from %s", l.Variant, want, argv)
			}
		}
		n := map[int]string{1024: "4096", 8192: "32768"}[l.RequestTokens]
		buf := map[int]string{1024: "134217728", 8192: "1073741824"}[l.RequestTokens]
		for _, want := range []string{"--start_batch_size=" + n, "--max_batch_size=" + n, "--total_buffer_size=" + buf, "--num_iter=16"} {
			if !strings.Contains(argv, want) {
				t.Errorf("%s: %s missing from %s", l.Variant, want, argv)
			}
		}
	}
	want := "UCX/1024tok|1024 UCX/8192tok|8192 LIBFABRIC/1024tok|1024 LIBFABRIC/8192tok|8192"
	if strings.Join(got, " ") != want {
		t.Errorf("legs %v, want %s", got, want)
	}
}

// TestGPUsAllIsTheHostsCount: gpus: all on the local backend is the count
// of this host's GPUs, said on the endpoint; one rank per GPU.
func TestGPUsAllIsTheHostsCount(t *testing.T) {
	sc, err := scenarios.LoadBytes("g.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: g}
backend: local
pools:
  - {name: gpu, gpus: all}
tests:
  - {name: ar, tool: nccl, from: gpu, args: {collective: all_reduce}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(sc, CompileOptions{HostGPUs: func() (int, string) { return 3, "nvidia-smi -L" }, HasRDMA: func(endpoint.Endpoint) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	rounds, err := p.AllRounds()
	if err != nil || len(rounds) != 1 {
		t.Fatalf("%d rounds: %v", len(rounds), err)
	}
	ep := p.Endpoints[0]
	if ep.GPUs != 3 || ep.GPUsFrom != "all: 3 GPU(s) on this host (nvidia-smi -L)" || rounds[0].Jobs[0].ID != "ar/r0/3-ranks-on-gpu-0" {
		t.Errorf("endpoint %d GPUs (%q), job %s", ep.GPUs, ep.GPUsFrom, rounds[0].Jobs[0].ID)
	}
}

// TestGPUsAllNotShared: gpus: all gives one endpoint every GPU of the host;
// a second endpoint with GPUs (another pool, a replica) would put two
// ranks on one GPU (NCCL: "Duplicate GPU detected"), so the plan refuses.
func TestGPUsAllNotShared(t *testing.T) {
	for name, pools := range map[string]string{
		"two pools": "  - {name: a, gpus: all}\n  - {name: b, gpus: 1}\n",
		"replicas":  "  - {name: a, gpus: all, replicas: 2}\n  - {name: b}\n",
	} {
		sc, err := scenarios.LoadBytes("g.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: g}
backend: local
pools:
`+pools+`tests:
  - {name: ar, tool: nccl, from: a, to: b, args: {collective: all_reduce}}
`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compile(sc, CompileOptions{HostGPUs: func() (int, string) { return 4, "nvidia-smi -L" }, HasRDMA: func(endpoint.Endpoint) bool { return true }})
		if err == nil || !strings.Contains(err.Error(), "gpus: all") || !strings.Contains(err.Error(), "4 GPU(s)") {
			t.Errorf("%s: %v, want a refusal naming gpus: all and the host's 4 GPU(s)", name, err)
		}
	}
}

// TestLocalEndpointsGetGPUsOfTheirOwn: on one host, prefill and decode each
// drive a GPU of their own (GPU 0 and GPU 1), so the KV transfer crosses
// between GPUs; every GPU stays visible (peer access), the endpoint's first.
// Where they do not fit the host, nothing is set (they share, as before).
func TestLocalEndpointsGetGPUsOfTheirOwn(t *testing.T) {
	sc, err := scenarios.LoadBytes("g.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: g}
backend: local
pools:
  - {name: prefill, gpus: 1}
  - {name: decode, gpus: 1}
tests:
  - {name: kv, tool: nixlbench, from: decode, to: prefill, args: {initiatorSeg: VRAM, targetSeg: VRAM}}
  - {name: probe, tool: nixl_probe, from: decode, to: prefill, args: {initiatorSeg: VRAM, targetSeg: VRAM}}
  - {name: sr, tool: nccl_probe, from: decode, to: prefill, args: {collective: sendrecv}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[int][2]string{4: {"0,1,2,3", "1,0,2,3"}, 2: {"0,1", "1,0"}, 1: {"", ""}} {
		p, err := Compile(sc, CompileOptions{HostGPUs: func() (int, string) { return host, "nvidia-smi -L" }, HasRDMA: func(endpoint.Endpoint) bool { return true }})
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]string{p.Endpoints[0].VisibleGPUs, p.Endpoints[1].VisibleGPUs}; got != want {
			t.Errorf("%d GPUs: visible %q, want %q", host, got, want)
		}
		rounds, err := p.AllRounds()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rounds {
			for _, j := range r.Jobs {
				for _, c := range j.Legs[0].Commands {
					wantEnv := want[0]
					if c.Endpoint == "decode-0" {
						wantEnv = want[1]
					}
					if got := c.Env["CUDA_VISIBLE_DEVICES"]; got != wantEnv {
						t.Errorf("%d GPUs: %s on %s: CUDA_VISIBLE_DEVICES %q, want %q", host, j.ID, c.Endpoint, got, wantEnv)
					}
				}
			}
		}
	}
}
