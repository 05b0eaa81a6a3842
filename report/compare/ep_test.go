package compare

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// A DeepEP test is compared by its EP budget, a row per stage: rank 3's
// low-latency combine 60% slower is a decode regression (+38%, beyond one repetition's 25%) (the slowest rank
// sets the budget), the prefill row is unchanged; sizes are not compared.
func TestCompareDeepEPByEPBudget(t *testing.T) {
	base, cur := fixture.DeepEP(), fixture.DeepEP()
	cur.EPBudget = nil
	for i, s := range cur.Results[0].Samples {
		if s.Phase == "low_latency combine (BF16)" && *s.Rank == 3 {
			slow := *s.LatAvgUS * 1.6
			cur.Results[0].Samples[i].LatAvgUS = &slow
		}
	}
	c := Compare(base, cur, Options{ThresholdPct: 5})
	if len(c.Rows) != 2 {
		t.Fatalf("%d rows, want one per stage: %+v", len(c.Rows), c.Rows)
	}
	dec, pre := c.Rows[0], c.Rows[1]
	if dec.Variant != "EP budget decode" || dec.Status != StatusRegression || dec.Baseline.Mean != 102.10000000000001 {
		t.Errorf("decode row %+v", dec)
	}
	// 38.06 + 64.04×1.6 = 140.524 µs a layer, × 58 = 8.15 ms a token.
	if !strings.HasPrefix(dec.Note, "EP decode ×58: 5.92 → 8.15 ms/token") {
		t.Errorf("decode note %q", dec.Note)
	}
	if pre.Variant != "EP budget prefill" || pre.Status != StatusUnchanged || !strings.HasPrefix(pre.Note, "EP prefill ×58: 60.63 → 60.63 ms/prefill") {
		t.Errorf("prefill row %+v", pre)
	}
	if c.Regressions() != 1 {
		t.Errorf("%d regressions, want 1", c.Regressions())
	}
	// The prefill stage not run now (mode: low_latency) is missing and fails.
	var ll []schema.Result
	ll = append(ll, cur.Results...)
	var keep []int
	for i, s := range ll[0].Samples {
		if !strings.HasPrefix(s.Phase, "normal") {
			keep = append(keep, i)
		}
	}
	samples := ll[0].Samples
	ll[0].Samples = nil
	for _, i := range keep {
		ll[0].Samples = append(ll[0].Samples, samples[i])
	}
	cur.Results = ll
	c = Compare(base, cur, Options{ThresholdPct: 5})
	if len(c.Rows) != 2 || c.Rows[1].Status != StatusMissing || !c.Rows[1].Lost {
		t.Errorf("prefill gone: %+v", c.Rows)
	}
}

// A baseline from before the back-to-back pair against a run that timed
// it: the pair counts the combine's launch gap, dispatch + combine timed
// apart does not, so the two are compared on what both measured (the
// phases apart): the same kernels are unchanged, not a regression.
func TestCompareDeepEPPairAgainstOlderBaseline(t *testing.T) {
	base, cur := fixture.DeepEP(), fixture.DeepEP()
	cur.EPBudget = nil
	base.EPBudget = nil
	sum := map[int]float64{}
	var tmpl []int
	for i, s := range cur.Results[0].Samples {
		if strings.HasPrefix(s.Phase, "low_latency dispatch") || strings.HasPrefix(s.Phase, "low_latency combine") {
			sum[*s.Rank] += *s.LatAvgUS
			if strings.HasPrefix(s.Phase, "low_latency dispatch") {
				tmpl = append(tmpl, i)
			}
		}
	}
	for _, i := range tmpl {
		s := cur.Results[0].Samples[i]
		s.Phase = "low_latency dispatch+combine (FP8)"
		gap := sum[*s.Rank] * 1.2 // the gap between the kernels counts
		s.LatAvgUS = &gap
		cur.Results[0].Samples = append(cur.Results[0].Samples, s)
	}
	if b := schema.BuildEPBudget(cur.Results); b == nil || b.Rows[0].Pair == nil {
		t.Fatalf("no pair in the current budget: %+v", b)
	}
	for _, c := range []*Comparison{Compare(base, cur, Options{ThresholdPct: 5}), Compare(cur, base, Options{ThresholdPct: 5})} {
		if dec := c.Rows[0]; dec.Status != StatusUnchanged || !strings.Contains(dec.Note, "apart") {
			t.Errorf("decode row %s: %q (baseline %v, current %v)", dec.Status, dec.Note, dec.Baseline.Mean, dec.Current.Mean)
		}
	}
}
