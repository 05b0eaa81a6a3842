package runner

import (
	"context"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

const standinScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: standins
backend: local
lineRate: 100Gb/s
pools:
  - name: decode
    gpus: 4
  - name: prefill
tests:
  - name: kv
    tool: nixlbench
    from: decode
    to: prefill
    args: {transports: tcp, minSize: 4KiB, maxSize: 64KiB, iterations: 200}
    env: {NIXLBENCH_STANDIN_POLL_MS: "50"}
    expect: {minBandwidth: 1Mb/s}
  - name: ar
    tool: nccl
    from: decode
    to: decode
    requires: tcp
    args: {collective: all_reduce, minSize: 1KiB, maxSize: 1MiB, iterations: 5}
    expect: {minBusBW: 1KB/s}
`

// TestPlannedStandinsWithParsers is the whole pipeline on the stand-ins:
// the planner's nixlbench and nccl-tests commands, the embedded etcd, the
// parsers package reading the stand-ins' output (byte-faithful formats).
func TestPlannedStandinsWithParsers(t *testing.T) {
	standins(t)
	sc, err := scenarios.LoadBytes("standins.yaml", []byte(standinScenario))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := plan.Compile(sc, plan.CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }, PortOffset: 300})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Plan: plan, Backend: local.New(), Scenario: sc, OutDir: t.TempDir(),
		LineRate: judge.ResolveLineRate(sc, nil), Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results", len(rep.Results))
	}
	by := map[string]schema.Result{}
	for _, r := range rep.Results {
		by[r.Test] = r
	}
	kv, ar := by["kv"], by["ar"]
	if kv.Verdict != schema.VerdictPass || len(kv.Samples) != 5 || kv.BestBps <= 0 || kv.Efficiency == nil {
		t.Errorf("nixlbench: %s %q, %d samples", kv.Verdict, kv.Reason, len(kv.Samples))
	}
	if ar.Verdict != schema.VerdictPass || len(ar.Samples) != 11 || ar.BestBps <= 0 || ar.Stats[0].Metric != parsers.MetricBusBW {
		t.Errorf("nccl: %s %q, %d samples", ar.Verdict, ar.Reason, len(ar.Samples))
	}
}
