package tools

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

func intp(n int) *int { return &n }

func sz(raw string) scenarios.Size {
	s := scenarios.Size{Raw: raw}
	if err := s.Parse(); err != nil {
		panic(err)
	}
	return s
}

func secs(raw string) scenarios.Duration {
	d := scenarios.Duration{Raw: raw}
	if err := d.Parse(); err != nil {
		panic(err)
	}
	return d
}

var (
	cli = endpoint.Endpoint{Name: "decode-0", Device: "mlx5_0", GIDIndex: intp(3)}
	srv = endpoint.Endpoint{Name: "prefill-0", Device: "mlx5_1", GIDIndex: intp(3)}
)

func build(t *testing.T, test scenarios.Test, leg Leg) []Command {
	t.Helper()
	spec, ok := Lookup(test.Tool)
	if !ok {
		t.Fatalf("no spec for %s", test.Tool)
	}
	leg.Test = &test
	if leg.Client.Name == "" {
		leg.Client, leg.Server = cli, srv
	}
	cmds, err := Build(spec, leg)
	if err != nil {
		t.Fatalf("build %s: %v", test.Tool, err)
	}
	return cmds
}

func argv(s string) []string { return strings.Fields(s) }

// expect compares commands with (endpoint, role, argv, port, ready, parse).
type expect struct {
	endpoint, role, argv string
	env                  map[string]string
	port                 int
	ready                string
	parse                bool
}

func check(t *testing.T, got []Command, want ...expect) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d commands, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Endpoint != w.endpoint || g.Role != w.role || g.Port != w.port || g.Ready != w.ready || g.Parse != w.parse {
			t.Errorf("command %d: got %s/%s port=%d ready=%q parse=%v, want %s/%s port=%d ready=%q parse=%v",
				i, g.Endpoint, g.Role, g.Port, g.Ready, g.Parse, w.endpoint, w.role, w.port, w.ready, w.parse)
		}
		if !reflect.DeepEqual(g.Argv, argv(w.argv)) {
			t.Errorf("command %d argv:\n got  %q\n want %q", i, g.Argv, argv(w.argv))
		}
		if len(g.Env) != len(w.env) || (len(w.env) > 0 && !reflect.DeepEqual(g.Env, w.env)) {
			t.Errorf("command %d env: got %v, want %v", i, g.Env, w.env)
		}
	}
}

func TestPerftestCommands(t *testing.T) {
	for _, tc := range []struct {
		name     string
		test     scenarios.Test
		size     int64
		srv, cli string
		ready    string
	}{
		{"tools.md 6.1 recipe", scenarios.Test{Tool: "ib_write_bw", Args: scenarios.Args{Iterations: 5000, QPs: 4}}, 65536,
			"ib_write_bw -d mlx5_1 -i 1 -x 3 -s 65536 -n 5000 -q 4 -F --report_gbits -p 18515",
			"ib_write_bw -d mlx5_0 -i 1 -x 3 -s 65536 -n 5000 -q 4 -F --report_gbits -p 18515 ${addr:prefill-0}", "listen"},
		{"duration, bidirectional", scenarios.Test{Tool: "ib_read_bw", Args: scenarios.Args{Duration: secs("10s"), Bidirectional: true}}, 1048576,
			"ib_read_bw -d mlx5_1 -i 1 -x 3 -s 1048576 -D 10 -F --report_gbits -p 18515 -b",
			"ib_read_bw -d mlx5_0 -i 1 -x 3 -s 1048576 -D 10 -F --report_gbits -p 18515 -b ${addr:prefill-0}", "listen"},
		{"sweep", scenarios.Test{Tool: "ib_send_bw", Args: scenarios.Args{Sweep: true, Iterations: 1000}}, 0,
			"ib_send_bw -d mlx5_1 -i 1 -x 3 -a -n 1000 -F --report_gbits -p 18515",
			"ib_send_bw -d mlx5_0 -i 1 -x 3 -a -n 1000 -F --report_gbits -p 18515 ${addr:prefill-0}", "listen"},
		{"latency: no -q, -b, --report_gbits", scenarios.Test{Tool: "ib_write_lat", Args: scenarios.Args{QPs: 4, Bidirectional: true, Iterations: 10000}}, 2,
			"ib_write_lat -d mlx5_1 -i 1 -x 3 -s 2 -n 10000 -F -p 18515",
			"ib_write_lat -d mlx5_0 -i 1 -x 3 -s 2 -n 10000 -F -p 18515 ${addr:prefill-0}", "listen"},
		{"rdma-cm, cuda, extra", scenarios.Test{Tool: "ib_write_bw", Args: scenarios.Args{RDMACM: true, UseCUDA: intp(0), ConnectionType: "rc", MTU: 4096, Extra: []string{"--use_cuda_dmabuf"}}}, 0,
			"ib_write_bw -d mlx5_1 -i 1 -x 3 -F --report_gbits -p 18515 -c RC -m 4096 -R --use_cuda=0 --use_cuda_dmabuf",
			"ib_write_bw -d mlx5_0 -i 1 -x 3 -F --report_gbits -p 18515 -c RC -m 4096 -R --use_cuda=0 --use_cuda_dmabuf ${addr:prefill-0}", "retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := build(t, tc.test, Leg{Size: tc.size})
			check(t, got,
				expect{endpoint: "prefill-0", role: RoleServer, argv: tc.srv, port: 18515, ready: tc.ready},
				expect{endpoint: "decode-0", role: RoleClient, argv: tc.cli, parse: true})
		})
	}
}

func TestPerftestAutoDeviceAndPort(t *testing.T) {
	leg := Leg{Client: endpoint.Endpoint{Name: "a-0", Device: "auto"}, Server: endpoint.Endpoint{Name: "a-1"}, Port: 18517}
	got := build(t, scenarios.Test{Tool: "ib_write_bw"}, leg)
	check(t, got,
		expect{endpoint: "a-1", role: RoleServer, argv: "ib_write_bw -i 1 -F --report_gbits -p 18517", port: 18517, ready: "listen"},
		expect{endpoint: "a-0", role: RoleClient, argv: "ib_write_bw -i 1 -F --report_gbits -p 18517 ${addr:a-1}", parse: true})
}

func TestPerftestRejectsSweepWithDuration(t *testing.T) {
	spec, _ := Lookup("ib_write_bw")
	test := scenarios.Test{Tool: "ib_write_bw", Args: scenarios.Args{Sweep: true, Duration: secs("5s")}}
	if _, err := Build(spec, Leg{Test: &test, Client: cli, Server: srv}); err == nil || !strings.Contains(err.Error(), "-D") {
		t.Fatalf("want an error naming -D, got %v", err)
	}
}

func TestRpingCommands(t *testing.T) {
	got := build(t, scenarios.Test{Tool: "rping", Args: scenarios.Args{Count: 5}}, Leg{Port: 7175})
	check(t, got,
		expect{endpoint: "prefill-0", role: RoleServer, argv: "rping -s -a ${addr:prefill-0} -p 7175 -v -C 5", port: 7175, ready: "retry"},
		expect{endpoint: "decode-0", role: RoleClient, argv: "rping -c -a ${addr:prefill-0} -p 7175 -v -C 5", parse: true})
	got = build(t, scenarios.Test{Tool: "rping"}, Leg{Size: 128})
	check(t, got,
		expect{endpoint: "prefill-0", role: RoleServer, argv: "rping -s -a ${addr:prefill-0} -p 7174 -v -C 10 -S 128", port: 7174, ready: "retry"},
		expect{endpoint: "decode-0", role: RoleClient, argv: "rping -c -a ${addr:prefill-0} -p 7174 -v -C 10 -S 128", parse: true})
}

func TestNixlbenchCommands(t *testing.T) {
	test := scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{Op: "read", InitiatorSeg: "VRAM", TargetSeg: "VRAM",
		MinSize: sz("4KiB"), MaxSize: sz("64MiB"), Iterations: 1008, Transports: "rc,cuda_copy"}}
	got := build(t, test, Leg{Backend: "UCX", Group: "kv-r0-decode-0-prefill-0-0"})
	line := "nixlbench --runtime_type=ETCD --etcd_endpoints=${etcd} --benchmark_group=rdmabench-${run}-kv-r0-decode-0-prefill-0-0 --backend=UCX --op_type=READ" +
		" --initiator_seg_type=VRAM --target_seg_type=VRAM --start_block_size=4096 --max_block_size=67108864 --num_iter=1008 --total_buffer_size=67108864"
	check(t, got,
		expect{endpoint: "decode-0", role: RoleInitiator, argv: line, ready: "line:ETCD Runtime: Registered as rank 0", parse: true,
			env: map[string]string{"UCX_TLS": "rc,cuda_copy", "UCX_NET_DEVICES": "mlx5_0:1", "UCX_PROTO_INFO": "y"}},
		expect{endpoint: "prefill-0", role: RoleTarget, argv: line,
			env: map[string]string{"UCX_TLS": "rc,cuda_copy", "UCX_NET_DEVICES": "mlx5_1:1", "UCX_PROTO_INFO": "y"}})

	got = build(t, scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{MaxBatch: 4}}, Leg{Backend: "UCCL", Group: "g"})
	line = "nixlbench --runtime_type=ETCD --etcd_endpoints=${etcd} --benchmark_group=rdmabench-${run}-g --backend=UCCL --op_type=WRITE" +
		" --initiator_seg_type=DRAM --target_seg_type=DRAM --start_block_size=4096 --max_block_size=67108864 --max_batch_size=4 --total_buffer_size=268435456"
	check(t, got,
		expect{endpoint: "decode-0", role: RoleInitiator, argv: line, ready: "line:ETCD Runtime: Registered as rank 0", parse: true,
			env: map[string]string{"NIXL_LOG_LEVEL": "INFO"}},
		expect{endpoint: "prefill-0", role: RoleTarget, argv: line, env: map[string]string{"NIXL_LOG_LEVEL": "INFO"}})

	// The buffer follows the threads and devices extra asks for; one extra
	// writes is left alone (nixlbench otherwise allocates its 8 GiB).
	got = build(t, scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{MaxSize: sz("1MiB"), MaxBatch: 2, Extra: []string{"--num_threads=4"}}}, Leg{Backend: "UCX", Group: "g"})
	if argv := strings.Join(got[0].Argv, " "); !strings.Contains(argv, " --total_buffer_size=8388608 ") {
		t.Errorf("argv %s: want --total_buffer_size=8388608 (1MiB × batch 2 × 4 threads)", argv)
	}
	got = build(t, scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{Extra: []string{"--total_buffer_size=1073741824"}}}, Leg{Backend: "UCX", Group: "g"})
	if argv := strings.Join(got[0].Argv, " "); strings.Count(argv, "total_buffer_size") != 1 {
		t.Errorf("argv %s: want extra's --total_buffer_size alone", argv)
	}

	// LIBFABRIC gets a progress thread (without one its target never
	// accepts the connection over tcp).
	got = build(t, scenarios.Test{Tool: "nixlbench"}, Leg{Backend: "LIBFABRIC", Group: "g"})
	if argv := strings.Join(got[0].Argv, " "); !strings.Contains(argv, "--backend=LIBFABRIC") || !strings.Contains(argv, " --enable_pt") {
		t.Errorf("LIBFABRIC argv %s: want --enable_pt", argv)
	}

	// ASIO: the initiator listens on its own data address at the job's port;
	// no etcd, no group.
	asio := scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{Runtime: "ASIO"}}
	if NeedsEtcd(&asio) {
		t.Error("an ASIO test needs no etcd")
	}
	got = build(t, asio, Leg{Backend: "UCX", Group: "g", Port: 12346})
	line = "nixlbench --runtime_type=ASIO --asio_address=${addr:decode-0} --asio_port=12346 --backend=UCX --op_type=WRITE" +
		" --initiator_seg_type=DRAM --target_seg_type=DRAM --start_block_size=4096 --max_block_size=67108864 --total_buffer_size=67108864"
	check(t, got,
		expect{endpoint: "decode-0", role: RoleInitiator, argv: line, ready: "listen", port: 12346, parse: true,
			env: map[string]string{"UCX_NET_DEVICES": "mlx5_0:1", "UCX_PROTO_INFO": "y"}},
		expect{endpoint: "prefill-0", role: RoleTarget, argv: line, env: map[string]string{"UCX_NET_DEVICES": "mlx5_1:1", "UCX_PROTO_INFO": "y"}})
}

func TestNCCLCommands(t *testing.T) {
	one := endpoint.Endpoint{Name: "ep-0", GPUs: 8}
	got := build(t, scenarios.Test{Tool: "nccl"}, Leg{Client: one, Server: one, Ranks: []endpoint.Endpoint{one}})
	check(t, got, expect{endpoint: "ep-0", role: RoleRank, parse: true,
		argv: "all_reduce_perf -b 8 -e 1073741824 -f 2 -g 8 -c 1 -J ${out}/nccl.json",
		env:  map[string]string{"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}})

	ranks := []endpoint.Endpoint{{Name: "ep-0", GPUs: 4}, {Name: "ep-1", GPUs: 4}}
	test := scenarios.Test{Tool: "nccl", Args: scenarios.Args{Collective: "alltoall", MinSize: sz("1MiB"), MaxSize: sz("1GiB"), Iterations: 50, DataType: "bfloat16"}}
	env := func(string) map[string]string { return map[string]string{"NCCL_IB_HCA": "mlx5", "NCCL_DEBUG": "INFO"} }
	got = build(t, test, Leg{Client: ranks[0], Server: ranks[0], Ranks: ranks, EnvFor: env})
	want := "mpirun --allow-run-as-root -np 8 --map-by slot -H ${addr:ep-0}:4,${addr:ep-1}:4" +
		" --mca plm_rsh_agent ssh --mca plm_rsh_args -i /tmp/rdmabench-${run}/ssh/id_ed25519 -p 2222" +
		" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR --mca plm_rsh_no_tree_spawn 1" +
		" -x NCCL_COMM_ID -x NCCL_DEBUG -x NCCL_IB_HCA -x PATH" +
		" alltoall_perf -b 1048576 -e 1073741824 -f 2 -g 1 -n 50 -d bfloat16 -c 1 -J ${out}/nccl.json"
	if a := strings.Join(got[0].Argv, " "); len(got) != 1 || a != want || got[0].Endpoint != "ep-0" || !got[0].Parse ||
		got[0].Env["NCCL_COMM_ID"] != "${addr:ep-0}:29500" || got[0].Env["RDMABENCH_MPI"] != "${run}" {
		t.Errorf("argv %q\nwant   %q\nenv %v", a, want, got[0].Env)
	}
	if i := slices.Index(got[0].Argv, "plm_rsh_args"); i < 0 || !strings.HasPrefix(got[0].Argv[i+1], "-i ") {
		t.Errorf("plm_rsh_args is not one argument: %q", got[0].Argv)
	}
	if s := got[0].SSH; s == nil || s.Port != 2222 || s.Dir != "/tmp/rdmabench-${run}/ssh" {
		t.Errorf("SSH launch %+v, want port 2222 in /tmp/rdmabench-${run}/ssh", s)
	}
}

// ssh hosts: the launcher reaches the other ranks through the per-run
// sshd; the -H entries and NCCL_COMM_ID are the hosts' data addresses; a
// planner-shifted port (--port-offset, concurrent jobs) shifts sshd's port
// with it; a scenario's NCCL_COMM_ID stands.
func TestNCCLOverSSHHosts(t *testing.T) {
	ranks := []endpoint.Endpoint{{Name: "a-0", Host: "gpu1", Address: "10.0.0.1", GPUs: 2}, {Name: "b-0", Host: "gpu2", Address: "10.0.0.2", GPUs: 2}}
	cmds := build(t, scenarios.Test{Tool: "nccl", Args: scenarios.Args{Collective: "sendrecv"}}, Leg{Ranks: ranks, Port: 29501})
	argv := strings.Join(cmds[0].Argv, " ")
	want := "mpirun --allow-run-as-root -np 4 --map-by slot -H 10.0.0.1:2,10.0.0.2:2 --mca plm_rsh_agent ssh --mca plm_rsh_args" +
		" -i /tmp/rdmabench-${run}/ssh/id_ed25519 -p 2223 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes" +
		" -o LogLevel=ERROR --mca plm_rsh_no_tree_spawn 1 -x NCCL_COMM_ID -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS -x PATH sendrecv_perf -b 8"
	if !strings.HasPrefix(argv, want) || cmds[0].Env["NCCL_COMM_ID"] != "10.0.0.1:29501" || cmds[0].SSH.Port != 2223 {
		t.Errorf("argv %q\nwant prefix %q\nenv %v", argv, want, cmds[0].Env)
	}
	env := func(string) map[string]string { return map[string]string{"NCCL_COMM_ID": "10.9.9.9:1234"} }
	cmds = build(t, scenarios.Test{Tool: "nccl"}, Leg{Ranks: ranks, EnvFor: env})
	if _, set := cmds[0].Env["NCCL_COMM_ID"]; set {
		t.Errorf("the scenario's NCCL_COMM_ID overridden: %v", cmds[0].Env)
	}
}

// Endpoints on one host share an address: their slots merge into one -H
// entry, since Open MPI refuses -H 127.0.0.1:1,127.0.0.1:1 with -N 1 ("more
// processes than the ppr … PPR: 1:node", issue 13). The debug level the
// transport evidence needs is added and forwarded.
func TestNCCLSameHostSlotsMerge(t *testing.T) {
	ranks := []endpoint.Endpoint{{Name: "a-0", GPUs: 1, Address: "127.0.0.1"}, {Name: "b-0", GPUs: 1, Address: "127.0.0.1"}}
	cmds := build(t, scenarios.Test{Tool: "nccl", Args: scenarios.Args{Collective: "sendrecv"}}, Leg{Client: ranks[0], Server: ranks[0], Ranks: ranks})
	argv := strings.Join(cmds[0].Argv, " ")
	want := "mpirun --allow-run-as-root -np 2 --map-by slot -H 127.0.0.1:2 -x NCCL_COMM_ID -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS sendrecv_perf"
	if !strings.HasPrefix(argv, want) || cmds[0].SSH != nil || cmds[0].Env["NCCL_COMM_ID"] != "127.0.0.1:29500" {
		t.Errorf("argv %q\nwant prefix %q", argv, want)
	}
}

func TestUCXPerftestCommands(t *testing.T) {
	test := scenarios.Test{Tool: "ucx_perftest", Args: scenarios.Args{Transports: "rc,self", Iterations: 10000}}
	got := build(t, test, Leg{Size: 1048576})
	check(t, got,
		expect{endpoint: "prefill-0", role: RoleServer, argv: "ucx_perftest -p 13337", port: 13337, ready: "listen",
			env: map[string]string{"UCX_TLS": "rc,self", "UCX_NET_DEVICES": "mlx5_1:1"}},
		expect{endpoint: "decode-0", role: RoleClient, argv: "ucx_perftest ${addr:prefill-0} -p 13337 -t tag_bw -s 1048576 -n 10000", parse: true,
			env: map[string]string{"UCX_TLS": "rc,self", "UCX_NET_DEVICES": "mlx5_0:1"}})

	tcp := scenarios.Test{Tool: "ucx_perftest", Args: scenarios.Args{Transports: "tcp", Test: "tag_lat"}}
	local := Leg{Client: endpoint.Endpoint{Name: "h-0"}, Server: endpoint.Endpoint{Name: "h-1", Device: "mlx5_0"}, Port: 13340}
	got = build(t, tcp, local)
	check(t, got,
		expect{endpoint: "h-1", role: RoleServer, argv: "ucx_perftest -p 13340", port: 13340, ready: "listen", env: map[string]string{"UCX_TLS": "tcp"}},
		expect{endpoint: "h-0", role: RoleClient, argv: "ucx_perftest ${addr:h-1} -p 13340 -t tag_lat -n 10000", parse: true, env: map[string]string{"UCX_TLS": "tcp"}})
	// No transports: UCX picks, and its INFO log names what it picked
	// (ep_cfg[0]: tag(sysv/memory cma/memory)), on the parsed side.
	free := scenarios.Test{Tool: "ucx_perftest"}
	got = build(t, free, local)
	check(t, got,
		expect{endpoint: "h-1", role: RoleServer, argv: "ucx_perftest -p 13340", port: 13340, ready: "listen", env: map[string]string{"UCX_NET_DEVICES": "mlx5_0:1"}},
		expect{endpoint: "h-0", role: RoleClient, argv: "ucx_perftest ${addr:h-1} -p 13340 -t tag_bw -n 10000", parse: true, env: map[string]string{"UCX_LOG_LEVEL": "info"}})
	if MetricOf(&tcp) != parsers.MetricLatency || MetricOf(&test) != parsers.MetricBandwidth {
		t.Fatalf("ucx metric: tag_lat %s, tag_bw %s", MetricOf(&tcp), MetricOf(&test))
	}
}

func TestIperf3Commands(t *testing.T) {
	test := scenarios.Test{Tool: "iperf3", Args: scenarios.Args{Duration: secs("5s"), Streams: 4, Bidirectional: true}}
	got := build(t, test, Leg{Port: 5202})
	check(t, got,
		expect{endpoint: "prefill-0", role: RoleServer, argv: "iperf3 -s -1 -p 5202", port: 5202, ready: "listen"},
		expect{endpoint: "decode-0", role: RoleClient, argv: "iperf3 -c ${addr:prefill-0} -p 5202 -t 5 -J -P 4 --bidir", parse: true})
	got = build(t, scenarios.Test{Tool: "iperf3"}, Leg{})
	check(t, got,
		expect{endpoint: "prefill-0", role: RoleServer, argv: "iperf3 -s -1 -p 5201", port: 5201, ready: "listen"},
		expect{endpoint: "decode-0", role: RoleClient, argv: "iperf3 -c ${addr:prefill-0} -p 5201 -t 10 -J", parse: true})
}

func TestSpecTable(t *testing.T) {
	for _, name := range Names() {
		spec, ok := Lookup(name)
		if !ok || spec.Name != name || len(spec.Programs) == 0 || spec.Metric == "" || spec.Install == "" {
			t.Errorf("incomplete spec for %s: %+v", name, spec)
		}
	}
	if _, ok := Lookup("ib_write_bandwidth"); ok {
		t.Error("unknown tool found")
	}
	rdma := map[string]bool{"ib_write_bw": true, "rping": true, "nixlbench": true, "ucx_perftest": true, "iperf3": false, "nccl": false}
	for tool, want := range rdma {
		if got := NeedsRDMA(&scenarios.Test{Tool: tool}, tool); got != want {
			t.Errorf("NeedsRDMA(%s) = %v, want %v", tool, got, want)
		}
	}
	if NeedsRDMA(&scenarios.Test{Tool: "ucx_perftest", Args: scenarios.Args{Transports: "tcp,self"}}, "ucx_perftest") {
		t.Error("ucx_perftest over tcp needs no RDMA")
	}
	if NeedsRDMA(&scenarios.Test{Tool: "ib_write_bw", Requires: "tcp"}, "ib_write_bw") {
		t.Error("requires: tcp wins")
	}
}

func TestLegTimeouts(t *testing.T) {
	for _, tc := range []struct {
		test scenarios.Test
		size int64
		want time.Duration
	}{
		{scenarios.Test{Tool: "iperf3", Args: scenarios.Args{Duration: secs("20s")}}, 0, 50 * time.Second},
		{scenarios.Test{Tool: "ib_write_bw", Args: scenarios.Args{Duration: secs("10s")}}, 0, 40 * time.Second},
		// 5000 × 64 KiB at 1 Gb/s ≈ 2.6 s + 5000 × 100 µs = 0.5 s.
		{scenarios.Test{Tool: "ib_write_bw"}, 65536, 33 * time.Second},
		{scenarios.Test{Tool: "rping", Args: scenarios.Args{Count: 100}}, 0, 40 * time.Second},
		// 15 block sizes × 20 s of etcd coordination, plus transfers.
		{scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{MinSize: sz("4KiB"), MaxSize: sz("4KiB")}}, 0, 50 * time.Second},
	} {
		if got := LegTimeout(&tc.test, tc.size, 0); got != tc.want {
			t.Errorf("%s %+v: timeout %v, want %v", tc.test.Tool, tc.test.Args, got, tc.want)
		}
	}
	long := LegTimeout(&scenarios.Test{Tool: "nixlbench"}, 0, 0)
	if long < 15*20*time.Second || long > 20*time.Minute {
		t.Errorf("nixlbench default sweep timeout %v not within 5 to 20 minutes", long)
	}
}

func TestInstallHintsAndParsers(t *testing.T) {
	for bin, want := range map[string]string{
		"ib_read_lat": "apt-get install perftest", "rping": "rdmacm-utils", "ucx_perftest": "ucx-utils",
		"iperf3": "apt-get install iperf3", "nixlbench": "ETCD runtime", "alltoall_perf": "nccl-tests", "mpirun": "openmpi-bin",
	} {
		if got := InstallHint(bin); !strings.Contains(got, want) {
			t.Errorf("InstallHint(%s) = %q, want it to mention %q", bin, got, want)
		}
	}
	if InstallHint("ls") != "" {
		t.Error("hint for an unknown binary")
	}
	for _, tc := range []struct {
		test scenarios.Test
		want string
	}{
		{scenarios.Test{Tool: "ib_write_bw"}, "ib_write_bw"},
		{scenarios.Test{Tool: "nccl", Args: scenarios.Args{Collective: "sendrecv"}}, "sendrecv_perf"},
		{scenarios.Test{Tool: "nccl"}, "all_reduce_perf"},
		{scenarios.Test{Tool: "nixlbench"}, "nixlbench"},
	} {
		if got := ParserOf(&tc.test); got != tc.want {
			t.Errorf("ParserOf(%s) = %q, want %q", tc.test.Tool, got, tc.want)
		}
	}
}
