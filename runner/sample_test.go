package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

const sampledScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: sampled
backend: local
pools:
  - name: ep
    replicas: 6
tests:
  - name: a2a
    tool: iperf3
    from: ep
    pattern: all-to-all
    sample: 2
    args: {duration: 1s}
    expect:
      minBandwidth: 1Mb/s
      lowPair: {below: 10%, retests: 1}
`

// TestSampledMatrixLocal runs a sampled all-to-all (6 endpoints, sample:
// 2, seed 2: matrix rounds 4 and 0 of 5) with real iperf3, ep-1 → ep-2
// throttled to 2 Mb/s: the run measures 12 of the 30 ordered pairs, the
// report says 40% of the matrix and 3 nights to cover it, and the low-pair
// drill-down retests the throttled link from the sample alone and finds it
// the lowest and bad. (Loopback iperf3 on a loaded machine can dip below
// the threshold too, so other pairs may be low as well.)
func TestSampledMatrixLocal(t *testing.T) {
	needBinaries(t, "iperf3")
	sc, err := scenarios.LoadBytes("sampled.yaml", []byte(sampledScenario))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }, PortOffset: 430, SampleSeed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Hold(); err != nil {
		t.Fatal(err)
	}
	throttled := 0
	for ri := range p.Rounds {
		for ji := range p.Rounds[ri].Jobs {
			for li := range p.Rounds[ri].Jobs[ji].Legs {
				l := &p.Rounds[ri].Jobs[ji].Legs[li]
				for ci := range l.Commands {
					if l.From == "ep-1" && l.To == "ep-2" && l.Commands[ci].Role == tools.RoleClient {
						l.Commands[ci].Argv = append(l.Commands[ci].Argv, "-b", "2M")
						throttled++
					}
				}
			}
		}
	}
	if len(p.Rounds) != 2 || throttled != 1 {
		t.Fatalf("%d rounds, throttled %d legs; want 2 rounds and ep-1 → ep-2 among them", len(p.Rounds), throttled)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	rep, err := Run(ctx, Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: out,
		LineRate: judge.ResolveLineRate(sc, nil), Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	want := schema.SampleCoverage{Test: "a2a", Partners: 2, Seed: 2, FirstRound: 4, Rounds: 2, MatrixRounds: 5,
		PlannedPairs: 12, MeasuredPairs: 12, MatrixPairs: 30, CoveredPct: 40, RunsToCover: 3}
	if len(rep.Samples) != 1 || rep.Samples[0] != want {
		t.Fatalf("samples %+v, want %+v", rep.Samples, want)
	}
	low := rep.LowPairs[0].Low
	if len(low) == 0 || low[0].From != "ep-1" || low[0].To != "ep-2" || low[0].Status != schema.LowPairBad || len(low[0].RetestBps) != 1 {
		t.Fatalf("low pairs %+v, want ep-1 → ep-2 first, bad on its retest (findings %q)", low, rep.LowPairs[0].Findings)
	}
	saved, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil || len(saved.Samples) != 1 || saved.Samples[0] != want {
		t.Fatalf("report.json samples: %v %+v", err, saved)
	}
	var insights strings.Builder
	if err := text.WriteInsights(&insights, saved); err != nil {
		t.Fatal(err)
	}
	line := "a2a: a sample of 2 partners per endpoint (seed 2: 2 of the matrix's 5 rounds, from round 4): 12 of 30 ordered pairs measured, 40.0% of the matrix; 3 runs with consecutive seeds cover it"
	if !strings.Contains(insights.String(), line) {
		t.Errorf("summary lacks %q:\n%s", line, insights.String())
	}
}
