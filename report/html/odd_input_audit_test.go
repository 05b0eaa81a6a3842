package html

import (
	"io"
	"math"
	"testing"

	"github.com/rdmabench/rdmabench/report/export"
	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
)

// Odd reports go through every writer without a panic: no results, only
// skipped results, only invalid ones, a zero line rate, an older
// report.json without the newer sections.
func TestOddReportsRender(t *testing.T) {
	mk := func(rs []schema.Result, lr *schema.LineRate) *schema.Report {
		r := &schema.Report{SchemaVersion: schema.Version, Run: schema.RunMeta{ID: "odd", Scenario: "s", LineRate: lr}, Results: rs}
		r.Summary = schema.CountVerdicts(rs)
		return r
	}
	skipped := []schema.Result{{Test: "t", Tool: "ib_write_bw", From: "a", To: "b", Verdict: schema.VerdictSkipped, Reason: "preflight memlock"}}
	invalid := fixture.Trust().Results
	for i := range invalid {
		invalid[i].Verdict = schema.VerdictInvalid
	}
	zero := fixture.Trust().Results
	cases := map[string]*schema.Report{
		"empty":      mk(nil, nil),
		"skipped":    mk(skipped, nil),
		"invalid":    mk(invalid, &schema.LineRate{Bps: 400e9}),
		"zero-rate":  mk(zero, &schema.LineRate{Bps: 0}),
		"old-fields": mk(fixture.Trust().Results, nil),
	}
	withServing := mk(zero, &schema.LineRate{Bps: 0})
	withServing.Serving = &schema.ServingSetup{Layers: 80, DtypeBytes: 2, ContextLengths: []int{1}} // no heads: hand-edited
	cases["serving-no-heads"] = withServing
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			schema.Derive(r)
			for _, w := range []func() error{
				func() error { return text.WriteSummaryTable(io.Discard, r) },
				func() error { return export.WriteJUnit(io.Discard, r) },
				func() error { return export.WriteOpenMetrics(io.Discard, r) },
				func() error { return text.WriteInsights(io.Discard, r) },
				func() error { return Write(io.Discard, r, Options{}) },
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
			_ = history.RunVerdict(r)
			_ = history.IndexOf(r)
		})
	}
}
