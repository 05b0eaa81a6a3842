package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/units"
)

const throttledScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: throttled
backend: local
pools:
  - name: ep
    replicas: 4
tests:
  - name: a2a
    tool: iperf3
    from: ep
    pattern: all-to-all
    args: {duration: 1s}
    expect:
      minBandwidth: 1Mb/s
      lowPair: {below: 10%, retests: 2}
`

// TestLowPairThrottledLocal runs real iperf3 all-to-all between 4 local
// endpoints with one direction (ep-1 → ep-2) throttled to 200 Mb/s by an
// iperf3 -b the test adds to that leg's client: the executor retests the
// low pair after the matrix, and the analysis names the link. The
// threshold is 10% of the best pair: loopback iperf3 on a shared machine
// swings between about 5 and 20 Gb/s (50% flagged pairs that recovered on
// retest: noise), the throttled one is 100 times lower.
func TestLowPairThrottledLocal(t *testing.T) {
	needBinaries(t, "iperf3")
	sc, err := scenarios.LoadBytes("throttled.yaml", []byte(throttledScenario))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }, PortOffset: 410})
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
				if l.From != "ep-1" || l.To != "ep-2" {
					continue
				}
				for ci := range l.Commands {
					if l.Commands[ci].Role == tools.RoleClient {
						l.Commands[ci].Argv = append(l.Commands[ci].Argv, "-b", "200M")
						throttled++
					}
				}
			}
		}
	}
	if throttled != 1 {
		t.Fatalf("throttled %d legs, want 1", throttled)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	rep, err := Run(ctx, Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: out,
		LineRate: judge.ResolveLineRate(sc, nil), Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	// A starved loopback pair on a loaded machine may dip below the
	// threshold too: it is retested as well, recovers, and is called
	// noise; only the throttled pair must stay low.
	retests, throttledRetests := 0, 0
	for _, r := range rep.Results {
		if r.Retest > 0 {
			retests++
			if r.From == "ep-1" && r.To == "ep-2" {
				throttledRetests++
			}
		}
	}
	if len(rep.Results) != 12+retests || throttledRetests != 2 {
		t.Fatalf("%d results, %d retests (%d of ep-1 → ep-2); want 12 + retests, 2 of them the throttled pair's", len(rep.Results), retests, throttledRetests)
	}
	if len(rep.LowPairs) != 1 {
		t.Fatalf("low-pair analyses: %+v", rep.LowPairs)
	}
	a := rep.LowPairs[0]
	for _, f := range a.Findings {
		t.Logf("finding: %s", f)
	}
	for _, lp := range a.Low {
		t.Logf("low pair %s → %s: %s, retests %v: %s", lp.From, lp.To, units.FormatRate(lp.Bps), lp.RetestBps, lp.Status)
	}
	t.Logf("best pair %s, threshold %s", units.FormatRate(a.ReferenceBps), units.FormatRate(a.ThresholdBps))
	var bad []schema.LowPair
	for _, lp := range a.Low {
		if lp.Status == schema.LowPairBad {
			bad = append(bad, lp)
		}
	}
	if len(bad) != 1 || bad[0].From != "ep-1" || bad[0].To != "ep-2" {
		t.Fatalf("low pairs confirmed bad %+v; want ep-1 → ep-2 alone", bad)
	}
	if bad[0].Bps > 250e6 || bad[0].Bps < 100e6 {
		t.Errorf("throttled pair measured %s, want about 200 Mb/s", units.FormatRate(bad[0].Bps))
	}
	if len(a.Suspects) != 1 || a.Suspects[0].Kind != "link" || !strings.Contains(a.Findings[0], "ep-1 ↔ ep-2") {
		t.Errorf("suspects %+v findings %q", a.Suspects, a.Findings)
	}
	// Retests keep their own raw outputs beside the matrix's.
	if m, _ := filepath.Glob(filepath.Join(out, "raw", "*retest-1*")); len(m) == 0 {
		entries, _ := os.ReadDir(filepath.Join(out, "raw"))
		t.Errorf("no retest raw folder; raw/ holds %v", entries)
	}
	saved, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil || len(saved.LowPairs) != 1 {
		t.Fatalf("report.json: %v, %+v", err, saved)
	}
}

// allToAllPlan is a local all-to-all of ib_write_bw over n endpoints at
// the given sizes.
func allToAllPlan(tb testing.TB, n int, sizes string) *plan.Plan {
	tb.Helper()
	sc, err := scenarios.LoadBytes("a2a.yaml", []byte(fmt.Sprintf(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: a2a}
backend: local
pools: [{name: ep, replicas: %d}]
tests:
  - {name: a2a, tool: ib_write_bw, from: ep, pattern: all-to-all, args: {sizes: [%s]}}
`, n, sizes)))
	if err != nil {
		tb.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// The legs of every low pair, found in one pass: each size of each pair,
// in its direction only; a pair the plan does not hold has none.
func TestRetestLegsOfLowPairs(t *testing.T) {
	r := &run{cfg: Config{Plan: allToAllPlan(t, 5, "4KiB, 64KiB")}}
	pairs := [][2]string{{"ep-0", "ep-1"}, {"ep-3", "ep-2"}, {"ep-4", "ep-9"}}
	got := r.legsOf("a2a", pairs)
	for _, p := range pairs[:2] {
		legs := got[p]
		if len(legs) != 2 {
			t.Fatalf("%v: %d legs, want one per size (2)", p, len(legs))
		}
		for _, jl := range legs {
			if l := jl.job.Legs[jl.leg]; l.From != p[0] || l.To != p[1] {
				t.Errorf("%v: leg %s → %s of job %s", p, l.From, l.To, jl.job.ID)
			}
		}
	}
	if legs := got[pairs[2]]; len(legs) != 0 {
		t.Errorf("a pair not in the plan: %d legs", len(legs))
	}
}

// BenchmarkRetestLegLookup: the legs of 20 low pairs of a 128-endpoint
// all-to-all (one pass over its rounds; it was one pass per pair).
func BenchmarkRetestLegLookup(b *testing.B) {
	r := &run{cfg: Config{Plan: allToAllPlan(b, 128, "64KiB")}}
	var pairs [][2]string
	for i := range 20 {
		pairs = append(pairs, [2]string{fmt.Sprintf("ep-%d", i), fmt.Sprintf("ep-%d", i+1)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if legs := r.legsOf("a2a", pairs); len(legs[pairs[19]]) != 1 {
			b.Fatal("pair 19 not found")
		}
	}
}
