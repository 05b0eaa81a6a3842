package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// oneLegPlan is a plan of one job with the given commands.
func oneLegPlan(tool string, timeout float64, cmds ...plan.PlannedCommand) *plan.Plan {
	return &plan.Plan{
		Scenario: "failures", Backend: "local", Endpoints: endpoints("client-0", "server-0"),
		Rounds: []plan.Round{{Test: "t", Jobs: []plan.Job{{
			ID: "t/r0/client-0->server-0", Test: "t", Tool: tool, Repetitions: 1, TimeoutSec: timeout,
			Legs: []plan.Leg{{From: "client-0", To: "server-0", Commands: cmds}},
		}}}},
	}
}

func runPlan(t *testing.T, ctx context.Context, p *plan.Plan) (*schema.Report, string, error) {
	t.Helper()
	out := t.TempDir()
	parse := DefaultParse // the parsers package
	if p.Rounds[0].Jobs[0].Tool == "trivial" {
		parse = testParse(0)
	}
	rep, err := Run(ctx, Config{Plan: p, Backend: local.New(), OutDir: out, Parse: parse, ExitGrace: time.Second, Progress: testWriter{t}})
	return rep, out, err
}

func exitCode(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return -1
}

// A server that never becomes ready: the leg times out, everything is
// killed, the run records an error with class timeout and goes on.
func TestServerNeverReady(t *testing.T) {
	dir := t.TempDir()
	srv, cli := filepath.Join(dir, "server.pid"), filepath.Join(dir, "client.pid")
	port := freePort(t)
	p := oneLegPlan("ucx_perftest", 1.5,
		plan.PlannedCommand{Endpoint: "server-0", Role: tools.RoleServer, Argv: pidFileCmd(srv, "sleep", "600"), Port: port, Ready: tools.ReadyListen},
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: pidFileCmd(cli, "sleep", "600"), Parse: true},
	)
	start := time.Now()
	rep, out, err := runPlan(t, context.Background(), p)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("run took %s; the leg bound is 1.5s", took)
	}
	if exitCode(err) != 3 {
		t.Fatalf("exit code %d (%v), want 3", exitCode(err), err)
	}
	r := rep.Results[0]
	if r.Verdict != schema.VerdictError || r.ErrorClass != parsers.ClassTimeout || !strings.Contains(r.Reason, "ready (listen)") {
		t.Fatalf("result %s/%s: %s", r.Verdict, r.ErrorClass, r.Reason)
	}
	if _, err := os.Stat(cli); err == nil {
		t.Error("the client was started although the server never became ready")
	}
	assertGone(t, srv)
	if _, err := schema.Load(filepath.Join(out, ReportFile)); err != nil {
		t.Error(err)
	}
}

// A client that crashes: the result is an error naming the crash, the
// server waiting for it is killed after the grace.
func TestClientCrashes(t *testing.T) {
	needBinaries(t, "ucx_perftest")
	dir := t.TempDir()
	srv, cli := filepath.Join(dir, "server.pid"), filepath.Join(dir, "client.pid")
	port := freePort(t)
	p := oneLegPlan("ucx_perftest", 30,
		plan.PlannedCommand{Endpoint: "server-0", Role: tools.RoleServer, Argv: pidFileCmd(srv, "ucx_perftest", "-p", strconv.Itoa(port)), Env: map[string]string{"UCX_TLS": "tcp"}, Port: port, Ready: tools.ReadyListen},
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"sh", "-c", "echo $$ > " + cli + "; echo starting; kill -SEGV $$"}, Parse: true},
	)
	rep, _, err := runPlan(t, context.Background(), p)
	if exitCode(err) != 3 {
		t.Fatalf("exit code %d (%v), want 3", exitCode(err), err)
	}
	r := rep.Results[0]
	if r.Verdict != schema.VerdictError || r.ErrorClass == parsers.ClassNone {
		t.Fatalf("result %s/%s: %s", r.Verdict, r.ErrorClass, r.Reason)
	}
	if !strings.Contains(r.Reason, "starting") || !strings.Contains(r.Reason, "killed") {
		t.Errorf("reason should quote the client's last output and say the server was killed: %s", r.Reason)
	}
	if r.Seconds > 20 {
		t.Errorf("leg took %.1fs", r.Seconds)
	}
	assertGone(t, srv, cli)
}

// A tool missing from PATH: a clear error naming it and how to install it.
func TestToolMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p := oneLegPlan("ucx_perftest", 10,
		plan.PlannedCommand{Endpoint: "server-0", Role: tools.RoleServer, Argv: []string{"ucx_perftest", "-p", "13337"}, Port: 13337, Ready: tools.ReadyListen},
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"ucx_perftest", "${addr:server-0}"}, Parse: true},
	)
	rep, _, err := runPlan(t, context.Background(), p)
	if exitCode(err) != 3 {
		t.Fatalf("exit code %d (%v), want 3", exitCode(err), err)
	}
	r := rep.Results[0]
	for _, want := range []string{"ucx_perftest not found in PATH", "server-0", "apt-get install ucx-utils"} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason %q lacks %q", r.Reason, want)
		}
	}
	if r.Verdict != schema.VerdictError {
		t.Errorf("verdict %s", r.Verdict)
	}
}

// Ctrl-C in the middle of a run (the context is cancelled, as
// signal.NotifyContext does): the finished result is kept, the running leg
// is killed, report.json says interrupted, the exit code is 130.
func TestInterruptKeepsFinishedResults(t *testing.T) {
	dir := t.TempDir()
	srv := filepath.Join(dir, "server.pid")
	port := freePort(t)
	p := oneLegPlan("trivial", 60,
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"true"}, Parse: true})
	p.Rounds = append(p.Rounds, plan.Round{Index: 1, Test: "hang", Jobs: []plan.Job{{
		ID: "hang/r1/client-0->server-0", Test: "hang", Tool: "trivial", TimeoutSec: 600, Round: 1,
		Legs: []plan.Leg{{Commands: []plan.PlannedCommand{
			{Endpoint: "server-0", Role: tools.RoleServer, Argv: pidFileCmd(srv, "sleep", "600"), Port: port, Ready: tools.ReadyListen},
			{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"true"}, Parse: true},
		}}},
	}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if data, _ := os.ReadFile(srv); strings.HasSuffix(string(data), "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	rep, out, err := runPlan(t, ctx, p)
	if exitCode(err) != 130 {
		t.Fatalf("exit code %d (%v), want 130", exitCode(err), err)
	}
	saved, lerr := schema.Load(filepath.Join(out, ReportFile))
	if lerr != nil {
		t.Fatal(lerr)
	}
	if !saved.Run.Interrupted || len(saved.Results) != 1 || saved.Results[0].Verdict != schema.VerdictPass || len(rep.Results) != 1 {
		t.Fatalf("interrupted=%v results=%d", saved.Run.Interrupted, len(saved.Results))
	}
	if n := len(readJSONL(t, filepath.Join(out, ResultsFile))); n != 1 {
		t.Errorf("results.jsonl: %d lines, want 1", n)
	}
	assertGone(t, srv)
}

// Without an RDMA device, RDMA-only tests are skipped with the reason and
// TCP-capable tests still run.
func TestSkipRDMAOnlyWithoutDevice(t *testing.T) {
	p := oneLegPlan("trivial", 10, plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"true"}, Parse: true})
	p.Rounds = append(p.Rounds, plan.Round{Index: 1, Test: "wbw", Jobs: []plan.Job{{
		ID: "wbw/r1/client-0->server-0", Test: "wbw", Tool: "ib_write_bw", TimeoutSec: 10, Round: 1,
		Legs: []plan.Leg{{Commands: []plan.PlannedCommand{{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"ib_write_bw"}}}}},
	}}})
	p.Skipped = []plan.SkippedTest{{Test: "planned-away", Tool: "rping", Reason: "no RDMA device"}}
	out := t.TempDir()
	rep, err := Run(context.Background(), Config{Plan: p, Backend: local.New(), OutDir: out, Parse: testParse(0),
		HasRDMA: func() (bool, string) { return false, "no RDMA device on this host" }})
	if err != nil {
		t.Fatalf("skips must not fail the run: %v", err)
	}
	if s := rep.Summary; s.Pass != 1 || s.Skipped != 2 || s.Total != 3 {
		t.Fatalf("summary %+v", s)
	}
	for _, r := range rep.Results {
		if r.Verdict == schema.VerdictSkipped && !strings.Contains(r.Reason, "RDMA") {
			t.Errorf("skip reason %q does not say why", r.Reason)
		}
	}
}

// The backend's fingerprint is saved in report.json for compare, with the
// UCX version preflight read where this host has ucx_info.
func TestFingerprintSaved(t *testing.T) {
	p := oneLegPlan("trivial", 10, plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"true"}, Parse: true})
	out := t.TempDir()
	fp := map[string]string{schema.FingerprintKernel: "6.1.0-56-amd64", schema.FingerprintNICFirmware: "28.39.1002"}
	if _, err := Run(context.Background(), Config{Plan: p, Backend: local.New(), OutDir: out, Parse: testParse(0), Fingerprint: fp}); err != nil {
		t.Fatal(err)
	}
	saved, err := schema.Load(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	got := saved.Run.Fingerprint
	if got["nic.firmware"] != "28.39.1002" || got["kernel"] != "6.1.0-56-amd64" || len(fp) != 2 {
		t.Fatalf("fingerprint %v, want %v (and the caller's map untouched)", got, fp)
	}
	want := 2
	if out, err := exec.Command("ucx_info", "-v").Output(); err == nil {
		want++
		if v := got[schema.FingerprintUCX]; v == "" || !strings.Contains(string(out), " "+v+"\n") {
			t.Errorf("ucx.version %q; ucx_info -v says:\n%s", v, out)
		}
	}
	if len(got) != want {
		t.Errorf("fingerprint %v: %d keys, want %d", got, len(got), want)
	}
}

// A server port already taken by another process: its listen-table entry
// must not pass for the server's readiness (the client would measure
// against that process). The leg is an error naming the port and the way
// out; neither side is started.
func TestServerPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	srv, cli := filepath.Join(dir, "server.pid"), filepath.Join(dir, "client.pid")
	p := oneLegPlan("trivial", 10,
		plan.PlannedCommand{Endpoint: "server-0", Role: tools.RoleServer, Argv: pidFileCmd(srv, "sleep", "600"), Port: port, Ready: tools.ReadyListen},
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: pidFileCmd(cli, "true"), Parse: true},
	)
	rep, _, err := runPlan(t, context.Background(), p)
	if exitCode(err) != 3 {
		t.Fatalf("exit code %d (%v), want 3", exitCode(err), err)
	}
	r := rep.Results[0]
	want := fmt.Sprintf("TCP port %d on server-0 is already in use", port)
	if r.Verdict != schema.VerdictError || !strings.Contains(r.Reason, want) || !strings.Contains(r.Reason, "--port-offset") {
		t.Fatalf("result %s/%s: %s (want an error with %q)", r.Verdict, r.ErrorClass, r.Reason, want)
	}
	for _, f := range []string{srv, cli} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was started although the port was taken", filepath.Base(f))
		}
	}
}

// A run stopped by its own time limit (--timeout) says so: report.json's
// run.error and the progress line carry the cause, and the hung leg's
// process is gone.
func TestRunTimeLimitSaysWhy(t *testing.T) {
	srv := filepath.Join(t.TempDir(), "server.pid")
	p := oneLegPlan("trivial", 600,
		plan.PlannedCommand{Endpoint: "server-0", Role: tools.RoleServer, Argv: pidFileCmd(srv, "sleep", "600"), Port: freePort(t), Ready: tools.ReadyListen},
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"true"}, Parse: true},
	)
	// 3 s: the server must have started (its pid file written) before the
	// limit, also with every package's tests running at once (1 s was not
	// always enough then).
	ctx, cancel := context.WithTimeoutCause(context.Background(), 3*time.Second, errors.New("--timeout 3s reached"))
	defer cancel()
	out := t.TempDir()
	var progress strings.Builder
	_, err := Run(ctx, Config{Plan: p, Backend: local.New(), OutDir: out, Parse: testParse(0), Progress: &progress})
	if exitCode(err) != 130 {
		t.Fatalf("exit code %d (%v), want 130", exitCode(err), err)
	}
	saved, lerr := schema.Load(filepath.Join(out, ReportFile))
	if lerr != nil {
		t.Fatal(lerr)
	}
	if !saved.Run.Interrupted || saved.Run.Error != "--timeout 3s reached" {
		t.Errorf("report run: interrupted=%v error=%q", saved.Run.Interrupted, saved.Run.Error)
	}
	if !strings.Contains(progress.String(), "interrupted (--timeout 3s reached): 0 result(s)") {
		t.Errorf("progress does not say why the run stopped:\n%s", progress.String())
	}
	assertGone(t, srv)
}

// A run whose every test was skipped measured nothing: it must not pass
// (exit 5, the skips in the report), unless AllowEmpty.
func TestEmptyRunIsNotAPass(t *testing.T) {
	p := &plan.Plan{Scenario: "empty", Backend: "local", Endpoints: endpoints("client-0", "server-0"),
		Skipped: []plan.SkippedTest{{Test: "wbw", Tool: "ib_write_bw", Reason: "no RDMA device"}}}
	rep, err := Run(context.Background(), Config{Plan: p, Backend: local.New(), OutDir: t.TempDir(), Parse: testParse(0)})
	var empty *EmptyRunError
	if !errors.As(err, &empty) || exitCode(err) != 5 {
		t.Fatalf("err %v (exit %d), want an EmptyRunError, exit 5", err, exitCode(err))
	}
	if rep.Summary.Skipped != 1 || !strings.Contains(err.Error(), "--allow-empty") {
		t.Errorf("summary %+v, error %q", rep.Summary, err)
	}
	if _, err := Run(context.Background(), Config{Plan: p, Backend: local.New(), OutDir: t.TempDir(), Parse: testParse(0), AllowEmpty: true}); err != nil {
		t.Fatalf("AllowEmpty: %v", err)
	}
}
