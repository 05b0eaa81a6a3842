package e2erdma

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// TestRunSoftRoCEScenario runs the shipped scenarios/softroce.yaml with
// `rdmabench run` (the binary `make build` wrote) against the VMs and checks
// report.json: real soft-RoCE results from the tools, verdicts against the
// line rate read from rxe0 over ssh, and RDMA transport evidence.
func TestRunSoftRoCEScenario(t *testing.T) {
	needDataLink(t)
	bin := filepath.Join(repoRoot, "bin", "rdmabench")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v (run `make build` first; `make e2e-rdma` does)", err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "scenarios/softroce.yaml", "--out", out, "-o", "json")
	cmd.Dir = repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("rdmabench run:\n%s", stderr.String())
	if strings.Contains(stderr.String(), `unknown command "run"`) {
		t.Skip("this build has no `rdmabench run` yet")
	}
	if err != nil {
		t.Fatalf("rdmabench run: %v", err)
	}
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	lr := rep.Run.LineRate
	if lr == nil || lr.Bps != 2.5e9 || lr.Source != schema.LineRateNIC || lr.Detail != "vm1 rxe0 port 1: 2.5 Gb/sec (1X SDR)" {
		t.Fatalf("line rate %+v; want 2.5 Gb/s read from vm1's rxe0", lr)
	}
	byTest := map[string]schema.Result{}
	for _, r := range rep.Results {
		byTest[r.Test] = r
		if r.Verdict != schema.VerdictPass {
			t.Errorf("%s: verdict %s (%s)", r.Test, r.Verdict, r.Reason)
		}
	}
	if len(byTest) != 5 {
		t.Fatalf("%d tests in the report; want 5", len(byTest))
	}
	for _, name := range []string{"write-bw-sweep", "read-lat"} {
		tr := byTest[name].Transport
		if tr == nil || tr.Kind != "rdma" || tr.Source != "perftest" || tr.Detail != "RoCE RC" || len(tr.Devices) != 1 || tr.Devices[0] != "rxe0" {
			t.Errorf("%s: transport %+v; want RDMA (RoCE on rxe0) from perftest's output", name, tr)
		}
	}
	// rping (RDMA CM) and UCX held to rc_verbs by UCX_TLS can only ride RDMA.
	for name, detail := range map[string]string{"rping": "RDMA CM", "ucx-verbs-bw": "rc_verbs"} {
		if tr := byTest[name].Transport; tr == nil || tr.Kind != "rdma" || tr.Detail != detail {
			t.Errorf("%s: transport %+v; want RDMA (%s)", name, tr, detail)
		}
	}
	bw := byTest["write-bw-sweep"]
	if bw.BestBps <= 0 || bw.BestBps >= 2.5e9 || bw.Efficiency == nil || math.Abs(*bw.Efficiency-bw.BestBps/2.5e9*100) > 0.1 || len(bw.Stats) != 23 {
		t.Errorf("write-bw-sweep: best %v efficiency %v, %d sizes", bw.BestBps, bw.Efficiency, len(bw.Stats))
	} else {
		t.Logf("ib_write_bw sweep best %.0f Mb/s at %d B = %.1f%% of rxe0's 2.5 Gb/s", bw.BestBps/1e6, bw.BestBytes, *bw.Efficiency)
	}
	for _, name := range []string{"ucx-verbs-bw", "ucx-tcp-bw"} {
		if r := byTest[name]; r.BestBps <= 0 {
			t.Errorf("%s: no bandwidth", name)
		}
	}
	if tr := byTest["ucx-tcp-bw"].Transport; tr == nil || tr.Kind != "tcp" {
		t.Errorf("ucx-tcp-bw: transport %+v; want tcp (UCX's ep_cfg line)", tr)
	}
	// Proof of the path: rxe counts packets (hw_counters sent_pkts and
	// rcvd_pkts); each side's rxe0 must have carried the tool's packets.
	for _, name := range []string{"write-bw-sweep", "read-lat", "ucx-verbs-bw"} {
		p := byTest[name].Path
		if p == nil || !p.Verified || p.ToolPackets <= 0 || len(p.Endpoints) != 2 {
			t.Errorf("%s: path %+v; want verified by rxe0's counters", name, p)
			continue
		}
		t.Logf("%s: tool %d bytes = %d packets; %s", name, p.ToolBytes, p.ToolPackets, p.Detail)
		// rxe has loss counters of its own (rcvd_seq_err, duplicate_request,
		// completer_retry_err …): the proof reads them too.
		if p.Health == "" || len(p.Endpoints[0].Health) == 0 {
			t.Errorf("%s: health %q %v; want rxe0's hw_counters read", name, p.Health, p.Endpoints[0].Health)
		}
		t.Logf("%s: health %s %s", name, p.Health, p.HealthDetail)
	}
	if p := byTest["ucx-tcp-bw"].Path; p != nil {
		t.Errorf("ucx-tcp-bw requires tcp: no path proof expected, got %+v", p)
	}
	if len(rep.Preflight) != 2 || schema.PreflightFailed(rep.Preflight) {
		t.Errorf("preflight: %+v", rep.Preflight)
	}
	if *record {
		dst := filepath.Join(repoRoot, "testdata", "softroce", "run")
		os.RemoveAll(dst)
		if err := exec.Command("cp", "-r", out, dst).Run(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunInterrupted: Ctrl-C during the ib_write_bw sweep ends the run
// with exit 130 and leaves no tool running on either VM (the ssh backend
// kills each remote process group).
func TestRunInterrupted(t *testing.T) {
	needDataLink(t)
	r := startRun(t, "run", "scenarios/softroce.yaml", "--out", t.TempDir())
	time.Sleep(3 * time.Second) // ib_write_bw is running on both VMs
	if code := r.interrupt(t); code != 130 {
		t.Errorf("exit %d; want 130\n%s", code, r.stderr.String())
	}
	b, _ := newBackend(t)
	eps, _ := provision(t, b)
	assertNoLeftovers(t, b, eps)
}

// startedRun is an rdmabench command running in the background.
type startedRun struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{} // closed once it exited
}

// startRun starts rdmabench with args and returns once its first round
// began (bounded: 2 minutes).
func startRun(t *testing.T, args ...string) *startedRun {
	t.Helper()
	return startRunWithin(t, 2*time.Minute, args...)
}

// startRunWithin is startRun with the first round's bound.
func startRunWithin(t *testing.T, bound time.Duration, args ...string) *startedRun {
	t.Helper()
	r := &startedRun{cmd: exec.Command(filepath.Join(repoRoot, "bin", "rdmabench"), args...), stderr: &syncBuffer{}, done: make(chan struct{})}
	r.cmd.Dir = repoRoot
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	deadline := time.After(bound)
	for !strings.Contains(r.stderr.String(), "round 1/") {
		select {
		case <-r.done:
			t.Fatalf("rdmabench exited before its first round:\n%s", r.stderr.String())
		case <-deadline:
			_ = r.cmd.Process.Kill()
			<-r.done
			t.Fatalf("the run never started its first round within %s:\n%s", bound, r.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return r
}

// interrupt sends Ctrl-C (SIGINT) and returns the exit code once the run
// ended (bounded: 90 s).
func (r *startedRun) interrupt(t *testing.T) int {
	t.Helper()
	return r.interruptWithin(t, 90*time.Second)
}

// interruptWithin is interrupt with the bound.
func (r *startedRun) interruptWithin(t *testing.T, bound time.Duration) int {
	t.Helper()
	_ = r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.done:
	case <-time.After(bound):
		_ = r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("rdmabench run did not end within %s of Ctrl-C:\n%s", bound, r.stderr.String())
	}
	return r.cmd.ProcessState.ExitCode()
}
