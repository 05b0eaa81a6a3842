package e2ekube

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

func benchScenario(ns string, replicas int) *scenarios.Scenario {
	return &scenarios.Scenario{
		Metadata: scenarios.Metadata{Name: "bench"}, Backend: scenarios.BackendKube,
		Cluster: &scenarios.Cluster{Namespace: ns, Image: "rdmabench/tools:test", Networks: []string{"default/data-net"},
			StartupTimeout: scenarios.Duration{Raw: "5m", Value: 5 * time.Minute}},
		Pools: []scenarios.Pool{{Name: "ep", Replicas: &replicas}},
	}
}

func benchEndpoints(n int) []endpoint.Endpoint {
	eps := make([]endpoint.Endpoint, n)
	for i := range eps {
		eps[i] = endpoint.Endpoint{Name: fmt.Sprintf("ep-%d", i), Pool: "ep", Index: i}
	}
	return eps
}

func newBenchBackend(b *testing.B, c *cluster.Cluster, sc *scenarios.Scenario, id string) *kube.Backend {
	be, err := kube.New(sc, kube.Options{Client: c.Client(), Config: c.RESTConfig(), RunID: id, Progress: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	return be
}

// BenchmarkPodsToReady is the time from the first pod create to every pod
// Ready (secondary network attached and read back) through the kube
// backend on the 4-node test cluster; the clean-up is not timed.
//
//	go test ./test/e2ekube -run '^$' -bench PodsToReady -benchtime 3x
func BenchmarkPodsToReady(b *testing.B) {
	if kc == nil {
		b.Skip("kube test cluster unavailable: " + skipReason)
	}
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				be := newBenchBackend(b, kc, benchScenario("bench-ready", n), fmt.Sprintf("bench-%d-%d", n, i))
				start := time.Now()
				eps, err := be.Provision(context.Background(), benchEndpoints(n))
				d := time.Since(start)
				b.StopTimer()
				if err != nil || len(eps) != n {
					_ = be.Cleanup(context.Background())
					b.Fatalf("provision %d: %v", n, err)
				}
				if err := be.Cleanup(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(d.Seconds(), "s-to-ready")
				b.StartTimer()
			}
		})
	}
}

// provisioned is a kube backend whose pods already exist: Provision
// returns them and Cleanup leaves them, so a benchmark times the jobs.
type provisioned struct {
	*kube.Backend
	eps []endpoint.Endpoint
}

func (p provisioned) Provision(context.Context, []endpoint.Endpoint) ([]endpoint.Endpoint, error) {
	return p.eps, nil
}
func (p provisioned) Cleanup(context.Context) error { return nil }

// BenchmarkKubeHarnessOverhead is what the runner adds per job on pods:
// run wall time minus the time inside the tools, for 20-job plans through
// the exec API. "trivial" runs true (one exec); "two-sided" an iperf3
// server found in the pod's listen table (polled through exec), then a
// 1 KiB client.
//
//	go test ./test/e2ekube -run '^$' -bench KubeHarnessOverhead -benchtime 2x
func BenchmarkKubeHarnessOverhead(b *testing.B) {
	if kc == nil {
		b.Skip("kube test cluster unavailable: " + skipReason)
	}
	be := newBenchBackend(b, kc, benchScenario("bench-overhead", 2), "bench-overhead")
	eps, err := be.Provision(context.Background(), benchEndpoints(2))
	defer func() { _ = be.Cleanup(context.Background()) }()
	if err != nil {
		b.Fatal(err)
	}
	const jobs = 20
	plans := map[string]func() *plan.Plan{
		"trivial":   func() *plan.Plan { return jobsPlan(eps, jobs, false) },
		"two-sided": func() *plan.Plan { return jobsPlan(eps, jobs, true) },
	}
	for _, name := range []string{"trivial", "two-sided"} {
		b.Run(name, func(b *testing.B) {
			var overhead, total time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				rep, err := runner.Run(context.Background(), runner.Config{Plan: plans[name](), Backend: provisioned{be, eps}, OutDir: b.TempDir(), Parse: benchParse})
				wall := time.Since(start)
				if err != nil || rep.Summary.Pass != jobs {
					b.Fatalf("run: %v %+v", err, rep.Summary)
				}
				var inTools float64
				for _, r := range rep.Results {
					inTools += r.ToolSeconds
				}
				overhead += wall - time.Duration(inTools*float64(time.Second))
				total += wall
			}
			// ms/job: what the runner adds beyond the tools' own time (exec
			// round trips that start and reap them count as tool time);
			// wall-ms/job: everything, exec through the apiserver included.
			b.ReportMetric(float64(overhead)/1e6/float64(b.N*jobs), "ms/job")
			b.ReportMetric(float64(total)/1e6/float64(b.N*jobs), "wall-ms/job")
		})
	}
}

func jobsPlan(eps []endpoint.Endpoint, jobs int, twoSided bool) *plan.Plan {
	p := &plan.Plan{Scenario: "bench", Backend: "kube", Endpoints: eps}
	for i := 0; i < jobs; i++ {
		job := plan.Job{ID: fmt.Sprintf("t/r%d", i), Test: "t", Tool: "trivial", Round: i, Repetitions: 1, TimeoutSec: 30}
		if twoSided {
			port := fmt.Sprint(5201 + i)
			job.Tool = "iperf3"
			job.Legs = []plan.Leg{{Commands: []plan.PlannedCommand{
				{Endpoint: eps[1].Name, Role: tools.RoleServer, Argv: []string{"iperf3", "-s", "-1", "-p", port}, Port: 5201 + i, Ready: tools.ReadyListen},
				{Endpoint: eps[0].Name, Role: tools.RoleClient, Argv: []string{"iperf3", "-c", eps[1].Address, "-p", port, "-n", "1K", "-J"}, Parse: true},
			}}}
		} else {
			job.Legs = []plan.Leg{{Commands: []plan.PlannedCommand{{Endpoint: eps[0].Name, Role: tools.RoleClient, Argv: []string{"true"}, Parse: true}}}}
		}
		p.Rounds = append(p.Rounds, plan.Round{Index: i, Test: "t", Jobs: []plan.Job{job}})
	}
	return p
}

// benchParse reads iperf3 with the real parser; the trivial tool's empty
// output is one measured sample.
func benchParse(tool string, r io.Reader) (parsers.Measurement, error) {
	if tool == "trivial" {
		return parsers.Measurement{Tool: tool, OK: true, Samples: []parsers.Sample{{Bytes: 1, BWAvgBps: parsers.F(1)}}}, nil
	}
	return runner.DefaultParse(tool, r)
}
