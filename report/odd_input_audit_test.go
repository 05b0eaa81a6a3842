package report

import (
	"io"
	"math"
	"testing"
)

// Odd reports go through every writer without a panic: no results, only
// skipped results, only invalid ones, a zero line rate, an older
// report.json without the newer sections.
func TestOddReportsRender(t *testing.T) {
	mk := func(rs []Result, lr *LineRate) *Report {
		r := &Report{SchemaVersion: SchemaVersion, Run: RunMeta{ID: "odd", Scenario: "s", LineRate: lr}, Results: rs}
		r.Summary = CountVerdicts(rs)
		return r
	}
	skipped := []Result{{Test: "t", Tool: "ib_write_bw", From: "a", To: "b", Verdict: VerdictSkipped, Reason: "preflight memlock"}}
	invalid := trustReport().Results
	for i := range invalid {
		invalid[i].Verdict = VerdictInvalid
	}
	zero := trustReport().Results
	cases := map[string]*Report{
		"empty":      mk(nil, nil),
		"skipped":    mk(skipped, nil),
		"invalid":    mk(invalid, &LineRate{Bps: 400e9}),
		"zero-rate":  mk(zero, &LineRate{Bps: 0}),
		"old-fields": mk(trustReport().Results, nil),
	}
	withServing := mk(zero, &LineRate{Bps: 0})
	withServing.Serving = &ServingSetup{Layers: 80, DtypeBytes: 2, ContextLengths: []int{1}} // no heads: hand-edited
	cases["serving-no-heads"] = withServing
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			Derive(r)
			for _, w := range []func() error{
				func() error { return WriteSummaryTable(io.Discard, r) },
				func() error { return WriteJUnit(io.Discard, r) },
				func() error { return WriteOpenMetrics(io.Discard, r) },
				func() error { return WriteInsights(io.Discard, r) },
				func() error { return WriteHTML(io.Discard, r, HTMLOptions{}) },
			} {
				if err := w(); err != nil {
					t.Fatal(err)
				}
			}
			if b := r.KVBudget; b != nil {
				for _, row := range b.Rows {
					for _, c := range row.Costs {
						if math.IsNaN(c.TTFTms) || math.IsInf(c.TTFTms, 0) {
							t.Fatalf("KV cost %v", c)
						}
					}
				}
			}
			for _, wf := range r.Waterfalls {
				for _, l := range wf.Layers {
					if l.PctLineRate != nil && (math.IsNaN(*l.PctLineRate) || math.IsInf(*l.PctLineRate, 0)) {
						t.Fatalf("waterfall %+v", l)
					}
				}
			}
			_ = RunVerdict(r)
			_ = IndexOf(r)
		})
	}
}
