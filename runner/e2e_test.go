package runner

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

const ucxSize = 64 << 10

// realToolsPlan is a ucx_perftest (UCX_TLS=tcp) and an iperf3 job over
// 127.0.0.1, the way the planner plans them.
func realToolsPlan(t *testing.T) *plan.Plan {
	up, ip := strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
	tcp := map[string]string{"UCX_TLS": "tcp"}
	return &plan.Plan{
		Scenario: "real-tools", Backend: "local", Endpoints: endpoints("client-0", "server-0"),
		Rounds: []plan.Round{
			{Index: 0, Test: "ucx-tcp", Jobs: []plan.Job{{
				ID: "ucx-tcp/r0/client-0->server-0", Test: "ucx-tcp", Tool: "ucx_perftest", Repetitions: 2, TimeoutSec: 120,
				Legs: []plan.Leg{{From: "client-0", To: "server-0", Variant: "64KiB", Backend: "tcp", Commands: []plan.PlannedCommand{
					{Endpoint: "server-0", Role: tools.RoleServer, Argv: []string{"ucx_perftest", "-p", up}, Env: tcp, Port: mustAtoi(up), Ready: tools.ReadyListen},
					{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"ucx_perftest", "${addr:server-0}", "-p", up, "-t", "tag_bw", "-s", strconv.Itoa(ucxSize), "-n", "500"}, Env: tcp, Parse: true},
				}}},
			}}},
			{Index: 1, Test: "iperf3-tcp", Jobs: []plan.Job{{
				ID: "iperf3-tcp/r1/client-0->server-0", Test: "iperf3-tcp", Tool: "iperf3", Repetitions: 1, TimeoutSec: 60,
				Legs: []plan.Leg{{From: "client-0", To: "server-0", Commands: []plan.PlannedCommand{
					{Endpoint: "server-0", Role: tools.RoleServer, Argv: []string{"iperf3", "-s", "-1", "-B", "${addr:server-0}", "-p", ip}, Port: mustAtoi(ip), Ready: tools.ReadyListen},
					{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"iperf3", "-c", "${addr:server-0}", "-p", ip, "-t", "1", "-J"}, Parse: true},
				}}},
			}}},
		},
	}
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }

func realToolsScenario() *scenarios.Scenario {
	return &scenarios.Scenario{
		Metadata: scenarios.Metadata{Name: "real-tools"},
		LineRate: scenarios.Rate{Raw: "100Gb/s"},
		Tests: []scenarios.Test{
			{Name: "ucx-tcp", Tool: "ucx_perftest", Requires: "tcp", Expect: scenarios.Expect{MinBandwidth: scenarios.Rate{Raw: "1Mb/s"}}},
			{Name: "iperf3-tcp", Tool: "iperf3", Expect: scenarios.Expect{MinBandwidth: scenarios.Rate{Raw: "1Mb/s"}}},
		},
	}
}

// TestRunRealToolsOverTCP runs the real ucx_perftest and iperf3 through the
// runner and checks that report.json holds the tools' own figures.
func TestRunRealToolsOverTCP(t *testing.T) {
	needBinaries(t, "ucx_perftest", "iperf3")
	out := t.TempDir()
	sc := realToolsScenario()
	rep, err := Run(context.Background(), Config{
		Plan: realToolsPlan(t), Backend: local.New(), Scenario: sc, OutDir: out, Version: "test",
		LineRate: judge.ResolveLineRate(sc, nil), Progress: testWriter{t}, // the parsers package reads the outputs
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	saved, err := schema.Load(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Results) != 2 || saved.Summary.Pass != 2 || len(rep.Results) != 2 {
		t.Fatalf("want 2 passing results, got %+v", saved.Summary)
	}
	ucx, ip := saved.Results[0], saved.Results[1]
	if ucx.Tool != "ucx_perftest" || ip.Tool != "iperf3" {
		t.Fatalf("results out of order: %s, %s", ucx.Tool, ip.Tool)
	}
	checkUCX(t, out, ucx)
	checkIperf(t, out, ip)
	if n := len(readJSONL(t, filepath.Join(out, ResultsFile))); n != 2 {
		t.Errorf("results.jsonl has %d lines, want 2", n)
	}
	if _, err := os.Stat(filepath.Join(out, PlanFile)); err != nil {
		t.Error(err)
	}
	checkHistoryIndex(t, out, saved)
}

// checkUCX re-reads every repetition's raw client output and compares.
func checkUCX(t *testing.T, out string, r schema.Result) {
	t.Helper()
	if len(r.Repetitions) != 2 || len(r.RawOutputs) != 4 || len(r.Stats) != 1 {
		t.Fatalf("ucx: want 2 repetitions, 4 raw files, 1 stats row; got %d, %d, %d", len(r.Repetitions), len(r.RawOutputs), len(r.Stats))
	}
	var sum float64
	for i, rep := range r.Repetitions {
		f, err := os.Open(filepath.Join(out, r.RawOutputs[2*i+1]))
		if err != nil {
			t.Fatal(err)
		}
		iters, bps, err := ucxFinal(f)
		f.Close()
		if err != nil || iters != 500 || bps <= 0 {
			t.Fatalf("raw %s: iters %v bps %v err %v", r.RawOutputs[2*i+1], iters, bps, err)
		}
		if got := *rep.Samples[0].BWAvgBps; got != bps {
			t.Errorf("repetition %d: report says %v b/s, raw output says %v", i, got, bps)
		}
		sum += bps
	}
	if mean := sum / 2; !near(r.Stats[0].Mean, mean) || !near(*r.Samples[0].BWAvgBps, mean) || r.BestBps != *r.Samples[0].BWAvgBps {
		t.Errorf("mean %v: stats %+v, sample %v, best %v", mean, r.Stats[0], *r.Samples[0].BWAvgBps, r.BestBps)
	}
	if r.Requires != "tcp" || r.Transport == nil || r.Transport.Kind != "tcp" {
		t.Errorf("ucx over UCX_TLS=tcp: requires %q, transport %+v", r.Requires, r.Transport)
	}
	if r.Verdict != schema.VerdictPass || r.Efficiency == nil || r.LineRate.Source != schema.LineRateDeclared {
		t.Errorf("ucx verdict %s reason %q efficiency %v", r.Verdict, r.Reason, r.Efficiency)
	}
}

func checkIperf(t *testing.T, out string, r schema.Result) {
	t.Helper()
	f, err := os.Open(filepath.Join(out, r.RawOutputs[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bps, err := iperfJSON(f)
	if err != nil || bps <= 0 {
		t.Fatalf("iperf3 raw: %v %v", bps, err)
	}
	if r.BestBps != bps || r.Verdict != schema.VerdictPass {
		t.Errorf("iperf3: report %v b/s (%s), raw %v", r.BestBps, r.Verdict, bps)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-6*b && d > -1e-6*b }

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// checkHistoryIndex: the run wrote history.idx beside report.json, current
// (history reads it without rewriting it) and holding report.json's figures.
func checkHistoryIndex(t *testing.T, out string, saved *schema.Report) {
	t.Helper()
	p := filepath.Join(out, IndexFile)
	before, err := os.Stat(p)
	if err != nil {
		t.Fatalf("no history index: %v", err)
	}
	idx, err := history.LoadRunIndex(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(p); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("history.idx was not current: rewritten (%v)", err)
	}
	if want := history.IndexOf(saved); !reflect.DeepEqual(idx.Results, want.Results) || idx.Verdict != want.Verdict || len(idx.Results) == 0 {
		t.Errorf("history.idx results %+v, report.json's %+v", idx.Results, want.Results)
	}
}
