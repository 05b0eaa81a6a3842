package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
)

func TestPortListening(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:3419 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1451 0100007F:3419 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  0 0 3 1
`
	for _, c := range []struct {
		port int
		want bool
	}{
		{13337, true}, // 0x3419 listening on 127.0.0.1
		{5201, false}, // 0x1451 is a connected socket, not a listener
		{8080, true},  // 0x1F90 on tcp6 ::
		{18515, false},
	} {
		if got := portListening([]byte(table), c.port); got != c.want {
			t.Errorf("port %d: got %v want %v", c.port, got, c.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	s := newSubstituter(map[string]endpoint.Endpoint{"b-0": {Name: "b-0", Address: "10.0.0.2"}}, "http://127.0.0.1:2379", "run1", "/tmp/o")
	argv, env, err := s.command(plan.PlannedCommand{
		Argv: []string{"nixlbench", "--etcd_endpoints=${etcd}", "--benchmark_group=rdmabench-${run}-j", "${addr:b-0}", "${out}/x.json"},
		Env:  map[string]string{"PEER": "${addr:b-0}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "nixlbench --etcd_endpoints=http://127.0.0.1:2379 --benchmark_group=rdmabench-run1-j 10.0.0.2 /tmp/o/x.json"
	if strings.Join(argv, " ") != want || env["PEER"] != "10.0.0.2" {
		t.Fatalf("got %q %v", argv, env)
	}
	for _, bad := range []string{"${addr:nope}", "${what}"} {
		if _, _, err := s.command(plan.PlannedCommand{Argv: []string{bad}}); err == nil || !strings.Contains(err.Error(), "unknown placeholder") {
			t.Errorf("%s: err %v", bad, err)
		}
	}
	noEtcd := newSubstituter(nil, "", "r", "/o")
	if _, _, err := noEtcd.command(plan.PlannedCommand{Argv: []string{"${etcd}"}}); err == nil {
		t.Error("${etcd} without an etcd must be an error")
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"write-bw/r3/decode-0->prefill-1": "write-bw_r3_decode-0_to_prefill-1",
		"../..":                           "_",
		"a b":                             "a_b",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

func TestConfiguredTransport(t *testing.T) {
	for _, c := range []struct {
		tool string
		env  map[string]string
		want string
	}{
		{"iperf3", nil, "tcp"},
		{"ucx_perftest", map[string]string{"UCX_TLS": "tcp"}, "tcp"},
		{"ucx_perftest", map[string]string{"UCX_TLS": "tcp,self,sm"}, "tcp"},
		{"ucx_perftest", map[string]string{"UCX_TLS": "rc,tcp"}, ""},
		{"ucx_perftest", map[string]string{"UCX_TLS": "rc_verbs"}, "rdma"},
		{"ucx_perftest", map[string]string{"UCX_TLS": "rc_x,ud_x,self,sm,cuda_copy"}, "rdma"},
		{"ucx_perftest", map[string]string{"UCX_TLS": "^tcp"}, ""},
		{"ucx_perftest", map[string]string{"UCX_TLS": "all"}, ""},
		{"rping", nil, "rdma"},
		{"ucx_perftest", map[string]string{"UCX_TLS": "sm"}, ""},
		{"ucx_perftest", nil, ""},
	} {
		got := ""
		if tr := configuredTransport(c.tool, c.env); tr != nil {
			got = tr.Kind
		}
		if got != c.want {
			t.Errorf("%s %v: got %q want %q", c.tool, c.env, got, c.want)
		}
	}
}

// FuzzPortListening: no listen table text may panic the readiness check.
func FuzzPortListening(f *testing.F) {
	f.Add([]byte("  sl  local_address rem_address   st\n   0: 0100007F:3419 00000000:0000 0A 0\n"), 13337)
	f.Add([]byte("0: :zz 0 0A\n1: 0100007F: x 0A"), 0)
	f.Fuzz(func(t *testing.T, table []byte, port int) {
		portListening(table, port)
	})
}

// A second run into a folder that holds one is refused before anything
// runs: results.jsonl would mix the two runs (it is appended to) and the
// raw outputs of the first would be overwritten.
func TestResultsFolderHoldingARunIsRefused(t *testing.T) {
	out := t.TempDir()
	cfg := Config{Plan: trivialPlan(1), Backend: local.New(), OutDir: out, Parse: testParse(0)}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cfg)
	if exitCode(err) != 3 || rep != nil || !strings.Contains(err.Error(), "already holds a run (results.jsonl)") {
		t.Fatalf("second run into %s: report %v, error %v (exit %d)", out, rep != nil, err, exitCode(err))
	}
	if again, _ := os.ReadFile(filepath.Join(out, ResultsFile)); string(again) != string(first) {
		t.Errorf("results.jsonl changed by the refused run:\n%s\nwas\n%s", again, first)
	}
}

// UniqueOutDir gives runs started within the same second folders of their
// own.
func TestUniqueOutDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "loopback-20260101-000000")
	if got := UniqueOutDir(base); got != base {
		t.Fatalf("free folder: %s, want %s", got, base)
	}
	for _, want := range []string{base + "-2", base + "-3"} {
		if err := os.MkdirAll(UniqueOutDir(base), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := UniqueOutDir(base); got != want {
			t.Errorf("UniqueOutDir = %s, want %s", got, want)
		}
	}
}

// The command lines in the report are the same from run to run: the
// environment is written in key order.
func TestCommandLineEnvInKeyOrder(t *testing.T) {
	s := &side{pc: plan.PlannedCommand{Endpoint: "a-0"}, argv: []string{"ucx_perftest", "-p", "13337"},
		env: map[string]string{"UCX_TLS": "tcp", "UCX_NET_DEVICES": "lo", "A": "1"}}
	want := "a-0$ A=1 UCX_NET_DEVICES=lo UCX_TLS=tcp ucx_perftest -p 13337"
	for i := 0; i < 20; i++ {
		if got := commandLine(s); got != want {
			t.Fatalf("commandLine = %q, want %q", got, want)
		}
	}
}

// A leg whose sides ran on one node (or ssh host) is marked: its traffic
// did not cross the fabric. Sides apart, or not known, are not.
func TestSharedMachineIsMarked(t *testing.T) {
	r := &run{endpoints: map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Node: "node-1"}, "b-0": {Name: "b-0", Node: "node-1"}, "b-1": {Name: "b-1", Node: "node-2"},
		"h-0": {Name: "h-0", Host: "vm1"}, "h-1": {Name: "h-1", Host: "vm1"}, "l-0": {Name: "l-0"}, "l-1": {Name: "l-1"}}}
	for _, c := range []struct {
		res  schema.Result
		want string
	}{
		{schema.Result{From: "a-0", To: "b-0", Reason: "measured"}, "node-1"},
		{schema.Result{From: "a-0", To: "b-1"}, ""},
		{schema.Result{Ranks: []string{"a-0", "b-0", "b-1"}}, ""},
		{schema.Result{Ranks: []string{"a-0", "b-0"}}, "node-1"},
		{schema.Result{From: "h-0", To: "h-1"}, "vm1"},
		{schema.Result{From: "l-0", To: "l-1"}, ""},
	} {
		res := c.res
		r.noteSharedMachine(&res)
		if res.SameMachine != c.want || (c.want != "") != strings.Contains(res.Reason, "not a fabric figure") {
			t.Errorf("%+v: sameMachine %q reason %q, want %q", c.res, res.SameMachine, res.Reason, c.want)
		}
	}
}

// Sides that UCX joined through shared memory (its own evidence: ep_cfg
// tag(sysv/memory cma/memory)) are processes of one host, whatever their
// nodes are called (the test cluster's virtual nodes): not a fabric figure.
func TestSharedMemoryTransportIsNoFabricFigure(t *testing.T) {
	r := &run{endpoints: map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Node: "node-1"}, "b-0": {Name: "b-0", Node: "node-2"}}}
	shm := &parsers.Transport{Kind: parsers.TransportShm, Source: "ucx", Detail: "cma+sysv"}
	res := schema.Result{From: "a-0", To: "b-0", Transport: shm}
	r.noteSharedMachine(&res)
	if !strings.Contains(res.Reason, "shared memory (cma+sysv)") || !strings.Contains(res.Reason, "not a fabric figure") {
		t.Errorf("reason %q: want shared memory named, not a fabric figure", res.Reason)
	}
	res = schema.Result{From: "a-0", To: "b-0", Transport: &parsers.Transport{Kind: parsers.TransportTCP}}
	if r.noteSharedMachine(&res); strings.Contains(res.Reason, "fabric") {
		t.Errorf("TCP between nodes marked: %q", res.Reason)
	}
}

// The run-time placeholders of a pod's device, port and GID are filled
// from the endpoint as provisioned; one that stays unknown (no GID on
// InfiniBand, no device) leaves its value out, with its flag or variable
// and mpirun's -x of it.
func TestDevicePlaceholdersFilledAtRunTime(t *testing.T) {
	g3, g5 := 3, 5
	eps := map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Address: "10.9.1.1", Device: "rxe1", Port: 1, GIDIndex: &g3},
		"b-0": {Name: "b-0", Address: "10.9.1.2", Device: "mlx5_3", Port: 2},
		"c-0": {Name: "c-0", Address: "10.9.1.3", Device: "rxe1", Port: 1, GIDIndex: &g3},
		"d-0": {Name: "d-0", Address: "10.9.1.4", Device: "rxe1", Port: 1, GIDIndex: &g5},
	}
	s := newSubstituter(eps, "", "run-1", "/tmp/o")
	for _, c := range []struct {
		argv []string
		env  map[string]string
		want []string
		wenv map[string]string
	}{
		{[]string{"ib_write_bw", "-d", "${dev:a-0}", "-i", "${port:a-0}", "-x", "${gid:a-0}", "-F", "${addr:b-0}"}, nil,
			[]string{"ib_write_bw", "-d", "rxe1", "-i", "1", "-x", "3", "-F", "10.9.1.2"}, nil},
		{[]string{"ib_write_bw", "-d", "${dev:b-0}", "-i", "${port:b-0}", "-x", "${gid:b-0}", "-F"}, nil,
			[]string{"ib_write_bw", "-d", "mlx5_3", "-i", "2", "-F"}, nil},
		{[]string{"mpirun", "-x", "NCCL_IB_GID_INDEX", "-x", "NCCL_IB_HCA", "all_reduce_perf"},
			map[string]string{"NCCL_IB_HCA": "=${dev:a-0}:${port:a-0},${dev:c-0}:${port:c-0}", "NCCL_IB_GID_INDEX": "${gids:a-0,c-0}"},
			[]string{"mpirun", "-x", "NCCL_IB_GID_INDEX", "-x", "NCCL_IB_HCA", "all_reduce_perf"},
			map[string]string{"NCCL_IB_HCA": "=rxe1:1,rxe1:1", "NCCL_IB_GID_INDEX": "3"}},
		{[]string{"mpirun", "-x", "NCCL_IB_GID_INDEX", "-x", "NCCL_IB_HCA", "all_reduce_perf"},
			map[string]string{"NCCL_IB_HCA": "=${dev:a-0}:${port:a-0}", "NCCL_IB_GID_INDEX": "${gids:a-0,d-0}"},
			[]string{"mpirun", "-x", "NCCL_IB_HCA", "all_reduce_perf"},
			map[string]string{"NCCL_IB_HCA": "=rxe1:1"}},
	} {
		argv, env, err := s.command(plan.PlannedCommand{Argv: c.argv, Env: c.env})
		if err != nil || strings.Join(argv, " ") != strings.Join(c.want, " ") || fmt.Sprint(env) != fmt.Sprint(c.wenv) {
			t.Errorf("%v %v:\n got %v %v %v\nwant %v %v", c.argv, c.env, argv, env, err, c.want, c.wenv)
		}
	}
}

// With lineRate: auto a pair is held to the lower of its two ends' own
// rates; an end whose rate was not read leaves the run's.
func TestLegLineRateIsTheLowerEnd(t *testing.T) {
	runRate := &schema.LineRate{Bps: 400e9, Source: schema.LineRateNIC, Detail: "a-0 mlx5_0"}
	r := &run{cfg: Config{LineRate: runRate}, rates: map[string]schema.LineRate{
		"a-0": {Bps: 400e9, Source: schema.LineRateNIC, Detail: "mlx5_0 port 1: 400 Gb/sec"},
		"b-0": {Bps: 200e9, Source: schema.LineRateNIC, Detail: "mlx5_3 port 1: 200 Gb/sec"}}}
	if lr := r.legLineRate(schema.Result{From: "a-0", To: "b-0"}, nil); lr.Bps != 200e9 || !strings.Contains(lr.Detail, "the lower of a-0") {
		t.Errorf("%+v", lr)
	}
	if lr := r.legLineRate(schema.Result{From: "a-0", To: "c-0"}, nil); lr != runRate {
		t.Errorf("%+v: want the run's", lr)
	}
}

// Sides that UCX joined GPU to GPU (cuda_ipc: GPU P2P since UCX's IPC
// transports read as NCCL's P2P) are GPUs of one host too, whatever their
// nodes are called: not a fabric figure, as shared memory was.
func TestGPUPeerTransportBetweenNodesIsNoFabricFigure(t *testing.T) {
	r := &run{endpoints: map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Node: "node-1"}, "b-0": {Name: "b-0", Node: "node-2"}}}
	p2p := &parsers.Transport{Kind: parsers.TransportP2P, Source: "ucx", Detail: "cuda_ipc (rma)"}
	res := schema.Result{From: "a-0", To: "b-0", Transport: p2p}
	r.noteSharedMachine(&res)
	if !strings.Contains(res.Reason, "cuda_ipc") || !strings.Contains(res.Reason, "not a fabric figure") {
		t.Errorf("reason %q: want GPU peer-to-peer named, not a fabric figure", res.Reason)
	}
}
