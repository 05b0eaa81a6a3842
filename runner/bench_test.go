package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// trivialPlan is jobs rounds of one job each, whose one leg runs /bin/true.
func trivialPlan(jobs int) *plan.Plan {
	p := &plan.Plan{Scenario: "bench", Backend: "local", Endpoints: endpoints("client-0")}
	for i := 0; i < jobs; i++ {
		p.Rounds = append(p.Rounds, plan.Round{Index: i, Test: "t", Jobs: []plan.Job{{
			ID: fmt.Sprintf("t/r%d/client-0", i), Test: "t", Tool: "trivial", Round: i, Repetitions: 1, TimeoutSec: 10,
			Legs: []plan.Leg{{Commands: []plan.PlannedCommand{{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"/bin/true"}, Parse: true}}}},
		}}})
	}
	return p
}

// BenchmarkHarnessOverhead measures what the runner adds per job: run wall
// time minus the time inside the tool, for a 100-job plan of /bin/true
// (start, wait, raw files, parse, results.jsonl with fsync, report.json).
//
//	go test ./runner/ -run '^$' -bench HarnessOverhead -benchtime 5x
func BenchmarkHarnessOverhead(b *testing.B) {
	const jobs = 100
	var overhead, tools time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rep, err := Run(context.Background(), Config{Plan: trivialPlan(jobs), Backend: local.New(), OutDir: b.TempDir(), Parse: testParse(0)})
		wall := time.Since(start)
		if err != nil || rep.Summary.Pass != jobs {
			b.Fatalf("run: %v %+v", err, rep.Summary)
		}
		var inTools float64
		for _, r := range rep.Results {
			inTools += r.ToolSeconds
		}
		tools += time.Duration(inTools * float64(time.Second))
		overhead += wall - time.Duration(inTools*float64(time.Second))
	}
	b.ReportMetric(float64(overhead)/1e6/float64(b.N*jobs), "ms/job")
	b.ReportMetric(float64(tools.Microseconds())/1e3/float64(b.N*jobs), "tool-ms/job")
}

// iperfPlan is jobs rounds of one two-sided job each: an iperf3 server
// waited for by its listen-table entry, then a 1 KiB client.
func iperfPlan(jobs, port int) *plan.Plan {
	p := &plan.Plan{Scenario: "bench", Backend: "local", Endpoints: endpoints("client-0", "server-0")}
	ps := fmt.Sprint(port)
	for i := 0; i < jobs; i++ {
		p.Rounds = append(p.Rounds, plan.Round{Index: i, Test: "t", Jobs: []plan.Job{{
			ID: fmt.Sprintf("t/r%d/client-0->server-0", i), Test: "t", Tool: "iperf3", Round: i, Repetitions: 1, TimeoutSec: 20,
			Legs: []plan.Leg{{Commands: []plan.PlannedCommand{
				{Endpoint: "server-0", Role: tools.RoleServer, Argv: []string{"iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", ps}, Port: port, Ready: tools.ReadyListen},
				{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"iperf3", "-c", "127.0.0.1", "-p", ps, "-n", "1K", "-J"}, Parse: true},
			}}},
		}}})
	}
	return p
}

// BenchmarkHarnessOverheadTwoSided is the same for a server + client leg
// with listen-table readiness (real iperf3 moving 1 KiB): what the runner
// adds around two processes, the port check before the server included.
// The readiness wait (server start to client start) falls in tool time.
//
//	go test ./runner/ -run '^$' -bench HarnessOverheadTwoSided -benchtime 2x
func BenchmarkHarnessOverheadTwoSided(b *testing.B) {
	needBinaries(b, "iperf3")
	const jobs = 100
	var overhead time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rep, err := Run(context.Background(), Config{Plan: iperfPlan(jobs, freePort(b)), Backend: local.New(), OutDir: b.TempDir()})
		wall := time.Since(start)
		if err != nil || rep.Summary.Pass != jobs {
			b.Fatalf("run: %v %+v", err, rep.Summary)
		}
		var inTools float64
		for _, r := range rep.Results {
			inTools += r.ToolSeconds
		}
		overhead += wall - time.Duration(inTools*float64(time.Second))
	}
	b.ReportMetric(float64(overhead)/1e6/float64(b.N*jobs), "ms/job")
}
