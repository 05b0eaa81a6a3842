package runner

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// nixlPlan is a two-rank nixlbench job: the initiator starts first and
// is waited for by `ready`, then the target.
func nixlPlan(ready string, reps int) *plan.Plan {
	group := tools.NixlGroup("nixl-r0")
	argv := []string{"nixlbench", "--etcd_endpoints=${etcd}", "--benchmark_group=" + group, "--backend=UCX",
		"--start_block_size=4096", "--max_block_size=65536", "--num_iter=200", "--warmup_iter=16", "--total_buffer_size=1048576"}
	env := map[string]string{"NIXLBENCH_STANDIN_POLL_MS": "50"}
	return &plan.Plan{
		Scenario: "nixl", Backend: "local", Endpoints: endpoints("decode-0", "prefill-0"), NeedsEtcd: true,
		Rounds: []plan.Round{{Test: "kv", Jobs: []plan.Job{{
			ID: "kv/r0/decode-0->prefill-0", Test: "kv", Tool: "nixlbench", Repetitions: reps, TimeoutSec: 60,
			Legs: []plan.Leg{{From: "decode-0", To: "prefill-0", Variant: "UCX", Backend: "UCX", NixlGroup: group, Commands: []plan.PlannedCommand{
				{Endpoint: "decode-0", Role: tools.RoleInitiator, Argv: argv, Env: env, Ready: ready, Parse: true},
				{Endpoint: "prefill-0", Role: tools.RoleTarget, Argv: argv, Env: env},
			}}},
		}}}},
	}
}

func nixlParse(tool string, r io.Reader) (parsers.Measurement, error) { return parseNixl(r) }

// TestNixlbenchThroughEtcd drives a two-rank nixlbench (stand-in) job
// through an etcd, checks the figures against the raw output, that keys
// were written during the run, and that none is left afterwards.
func TestNixlbenchThroughEtcd(t *testing.T) {
	standins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, c := startTestEtcd(ctx, t)
	puts := watchPuts(ctx, c, "xferbench/")
	out := t.TempDir()
	rep, err := Run(ctx, Config{Plan: nixlPlan("line:Registered as rank 0", 2), Backend: local.New(), OutDir: out,
		RunID: "test1", EtcdURL: srv.URL, Parse: nixlParse, Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v (%+v)", err, rep.Results)
	}
	r := rep.Results[0]
	if r.Verdict != schema.VerdictPass || len(r.Samples) != 5 || len(r.Repetitions) != 2 {
		t.Fatalf("verdict %s (%s), %d samples, %d reps", r.Verdict, r.Reason, len(r.Samples), len(r.Repetitions))
	}
	for i, repn := range r.Repetitions {
		f, err := os.Open(filepath.Join(out, r.RawOutputs[2*i]))
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := nixlRows(f)
		f.Close()
		for _, s := range repn.Samples {
			if rows[s.Bytes] <= 0 || *s.BWAvgBps != rows[s.Bytes]*8e9 {
				t.Errorf("rep %d size %d: report %v b/s, raw %v GB/s", i, s.Bytes, *s.BWAvgBps, rows[s.Bytes])
			}
		}
	}
	if n := puts(); n < 10 {
		t.Errorf("only %d key writes under xferbench/ during the run; the rendezvous did not go through etcd", n)
	}
	resp, err := c.Get(ctx, "xferbench/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		t.Errorf("key left after the run: %s=%q", kv.Key, kv.Value)
	}
	// The tool (as the real one) leaves its rank leases to expire; the
	// runner revokes them with the leg.
	leases, err := c.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Leases {
		t.Errorf("lease %x left after the run", l.ID)
	}
}

// watchPuts counts PUTs under prefix; the returned func stops and reads.
// startTestEtcd starts an embedded etcd and a client of it, both closed
// when the test ends.
func startTestEtcd(ctx context.Context, t *testing.T) (*runetcd.Server, *clientv3.Client) {
	t.Helper()
	srv, err := runetcd.Start(ctx, runetcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

func watchPuts(ctx context.Context, c *clientv3.Client, prefix string) func() int64 {
	var n atomic.Int64
	wctx, cancel := context.WithCancel(ctx)
	wch := c.Watch(wctx, prefix, clientv3.WithPrefix())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for resp := range wch {
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypePut {
					n.Add(1)
				}
			}
		}
	}()
	return func() int64 {
		cancel()
		<-done
		return n.Load()
	}
}

// TestNixlbenchEmbeddedEtcd: the runner starts its own etcd because the
// plan needs one, waits for rank 0 by its etcd key, and removes the etcd's
// data folder at the end.
func TestNixlbenchEmbeddedEtcd(t *testing.T) {
	standins(t)
	// A temporary folder of its own: other tests (and lanes) start etcds too.
	t.Setenv("TMPDIR", t.TempDir())
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "rdmabench-etcd-*"))
	p := nixlPlan("etcd:xferbench/rdmabench-${run}-nixl-r0//rank/0", 1)
	rep, err := Run(context.Background(), Config{Plan: p, Backend: local.New(), OutDir: t.TempDir(), Parse: nixlParse})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if r := rep.Results[0]; r.Verdict != schema.VerdictPass || r.BestBps <= 0 {
		t.Fatalf("%s: %s", r.Verdict, r.Reason)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "rdmabench-etcd-*"))
	if len(before) != 0 || len(after) != 0 {
		t.Errorf("embedded etcd data folder left behind: %v", after)
	}
}

// TestNixlbenchStaleSizeKey: a //size key left by a SIGKILLed earlier run
// in the same group would make both ranks register wrong (tools.md §3.3);
// the runner clears the group before each leg, so the leg still passes.
func TestNixlbenchStaleSizeKey(t *testing.T) {
	standins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, c := startTestEtcd(ctx, t)
	stale := tools.EtcdPrefix("rdmabench-stale-nixl-r0") + "/size"
	if _, err := c.Put(ctx, stale, "1"); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Config{Plan: nixlPlan("line:Registered as rank 0", 1), Backend: local.New(), OutDir: t.TempDir(),
		RunID: "stale", EtcdURL: srv.URL})
	if err != nil || rep.Results[0].Verdict != schema.VerdictPass {
		t.Fatalf("run: %v %+v", err, rep.Results)
	}
}

// TestNixlbenchInterruptedLeavesNoKeys: Ctrl-C while the ranks are
// registered: both are killed, the group's keys (//size, //rank/N,
// barriers) are deleted and the leases the ranks held (30 s, kept alive by
// processes that are gone) revoked, the run exits 130.
func TestNixlbenchInterruptedLeavesNoKeys(t *testing.T) {
	standins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, c := startTestEtcd(ctx, t)
	p := nixlPlan("line:Registered as rank 0", 1)
	for i := range p.Rounds[0].Jobs[0].Legs[0].Commands {
		// slow polling keeps the ranks in the rendezvous when Ctrl-C comes
		p.Rounds[0].Jobs[0].Legs[0].Commands[i].Env = map[string]string{"NIXLBENCH_STANDIN_POLL_MS": "3000"}
	}
	runCtx, interrupt := context.WithCancel(ctx)
	go func() {
		for {
			if n, _ := runetcd.CountPrefix(ctx, c, tools.EtcdPrefix("rdmabench-int-nixl-r0")+"/rank/"); n == 2 {
				interrupt()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_, err := Run(runCtx, Config{Plan: p, Backend: local.New(), OutDir: t.TempDir(), RunID: "int", EtcdURL: srv.URL})
	if exitCode(err) != 130 {
		t.Fatalf("exit %d (%v), want 130", exitCode(err), err)
	}
	resp, err := c.Get(ctx, "xferbench/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		t.Errorf("key left after the interrupted run: %s", kv.Key)
	}
	leases, err := c.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Leases {
		t.Errorf("lease %x left after the interrupted run", l.ID)
	}
}

// TestNixlbenchUnreachableEtcd: an --etcd nothing answers at ends the run
// at its start, bounded, with the address and the fix, before any tool
// runs; it never hangs a leg.
func TestNixlbenchUnreachableEtcd(t *testing.T) {
	standins(t)
	old := runetcd.AnswerBound
	runetcd.AnswerBound = time.Second
	t.Cleanup(func() { runetcd.AnswerBound = old })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = Run(ctx, Config{Plan: nixlPlan("line:Registered as rank 0", 1), Backend: local.New(), OutDir: t.TempDir(),
		RunID: "unreachable", EtcdURL: url, Parse: nixlParse})
	if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "check --etcd") {
		t.Fatalf("error %v; want the address and the fix", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run outlived its bound")
	}
}

// A skipped nixlbench leg carries its test's op and the command lines it
// would have run, so that the report sets it beside the backends of the
// same workload that did run.
func TestSkippedNixlLegSaysWhatItWouldHaveRun(t *testing.T) {
	r := &run{tests: map[string]*scenarios.Test{"kv": {Name: "kv", Tool: "nixlbench", Args: scenarios.Args{Op: "READ"}}}}
	job := nixlPlan("line:Registered as rank 0", 1).Rounds[0].Jobs[0]
	res := r.skippedResult(&job, 0, "nixlbench lacks the ETCD runtime")
	if res.Op != "READ" || res.Verdict != schema.VerdictSkipped || len(res.Commands) != 2 ||
		!strings.HasPrefix(res.Commands[0], "decode-0$ NIXLBENCH_STANDIN_POLL_MS=50 nixlbench --etcd_endpoints=${etcd}") {
		t.Errorf("skipped result: op %q verdict %q commands %q", res.Op, res.Verdict, res.Commands)
	}
}
