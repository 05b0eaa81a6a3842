package schema_test

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// The EP budget of the real 4×H100 run: each phase at its slowest rank,
// dispatch + combine × 58 MoE layers.
func TestEPBudgetOfTheH100Run(t *testing.T) {
	b := schema.BuildEPBudget(fixture.DeepEP().Results)
	if b == nil || len(b.Rows) != 2 {
		t.Fatalf("budget %+v, want a decode and a prefill row", b)
	}
	dec, pre := b.Rows[0], b.Rows[1]
	// Decode: low-latency dispatch's slowest is rank 2 (38.06 µs), combine's
	// rank 3 (64.04 µs): 102.10 µs a layer, 5.9218 ms a token.
	if dec.Stage != schema.EPStageDecode || dec.Kernels != "low_latency" || dec.Tokens != 128 || dec.Ranks != 4 || dec.MoELayers != 58 {
		t.Errorf("decode row %+v", dec)
	}
	checkPhase(t, "decode dispatch", dec.Dispatch, "low_latency dispatch (FP8)", 2, 38.06, (37.92+38.01+38.06+37.12)/4)
	checkPhase(t, "decode combine", dec.Combine, "low_latency combine (BF16)", 3, 64.04, (62.61+63.17+63.04+64.04)/4)
	if math.Abs(dec.LayerUS-102.10) > 1e-9 || math.Abs(dec.Ms-5.9218) > 1e-9 {
		t.Errorf("decode: %v µs a layer, %v ms a token; want 102.10, 5.9218", dec.LayerUS, dec.Ms)
	}
	// Prefill: normal dispatch rank 2 (434.32 µs), combine rank 1 (611.06 µs).
	if pre.Stage != schema.EPStagePrefill || pre.Tokens != 4096 {
		t.Errorf("prefill row %+v", pre)
	}
	checkPhase(t, "prefill dispatch", pre.Dispatch, "normal dispatch (FP8)", 2, 434.32, (434.26+434.30+434.32+434.30)/4)
	checkPhase(t, "prefill combine", pre.Combine, "normal combine (BF16)", 1, 611.06, (610.38+611.06+610.74+610.86)/4)
	if math.Abs(pre.Ms-1045.38*58/1000) > 1e-9 {
		t.Errorf("prefill %v ms a pass, want %v", pre.Ms, 1045.38*58/1000)
	}
	if pre.Dispatch.Bytes != 109076352 || math.Abs(pre.Dispatch.Bps-109076352*8/434.32e-6) > 1 {
		t.Errorf("prefill dispatch: rank 2's bytes and rate, got %d B at %v b/s", pre.Dispatch.Bytes, pre.Dispatch.Bps)
	}
	data, _ := json.MarshalIndent(b, "", "  ")
	fixture.Golden(t, "epbudget.golden", append(data, '\n'))
}

func checkPhase(t *testing.T, name string, p schema.EPPhase, phase string, rank int, avg, mean float64) {
	t.Helper()
	if p.Phase != phase || p.Rank != rank || math.Abs(p.AvgUS-avg) > 1e-9 || math.Abs(p.MeanUS-mean) > 1e-9 || p.RanksSeen != 4 {
		t.Errorf("%s: %+v, want %s rank %d at %v µs (mean %v over 4)", name, p, phase, rank, avg, mean)
	}
}

// Only a kernel set with both phases is costed; a result that errored, a
// retest or another family is not; MoE layers unset is DeepSeek-R1's 58;
// a tie names the lower rank.
func TestEPBudgetRules(t *testing.T) {
	rank := func(r int, phase string, us float64) parsers.Sample {
		return parsers.Sample{Bytes: 1000, Batch: 64, Phase: phase, Rank: &r, LatAvgUS: &us}
	}
	deepep := func(verdict string, samples ...parsers.Sample) schema.Result {
		return schema.Result{Test: "ep", Family: parsers.FamilyDeepEP, Verdict: verdict, Samples: samples}
	}
	ll := []parsers.Sample{rank(0, "low_latency dispatch (BF16)", 10), rank(1, "low_latency dispatch (BF16)", 10),
		rank(0, "low_latency combine (BF16)", 20), rank(1, "low_latency combine (BF16)", 15)}
	onlyDispatch := deepep(schema.VerdictPass, rank(0, "normal dispatch (BF16)", 100))
	errored := deepep(schema.VerdictError, ll...)
	retest := deepep(schema.VerdictPass, ll...)
	retest.Retest = 1
	other := deepep(schema.VerdictPass, ll...)
	other.Family = parsers.FamilyNCCL
	if b := schema.BuildEPBudget([]schema.Result{onlyDispatch, errored, retest, other}); b != nil {
		t.Fatalf("nothing to cost, got %+v", b)
	}
	failed := deepep(schema.VerdictFail, append(ll, rank(0, "normal dispatch (BF16)", 100))...)
	b := schema.BuildEPBudget([]schema.Result{failed})
	if b == nil || len(b.Rows) != 1 {
		t.Fatalf("want the low-latency row only, got %+v", b)
	}
	c := b.Rows[0]
	if c.MoELayers != 58 || c.Dispatch.Rank != 0 || c.Combine.Rank != 0 || c.LayerUS != 30 || math.Abs(c.Ms-30*58/1000.0) > 1e-12 || c.Tokens != 64 || c.Ranks != 2 {
		t.Errorf("row %+v", c)
	}
	failed.MoELayers = 61
	if c := schema.BuildEPBudget([]schema.Result{failed}).Rows[0]; c.MoELayers != 61 || math.Abs(c.Ms-30*61/1000.0) > 1e-12 {
		t.Errorf("61 layers: %+v", c)
	}
}

// A saved budget is the report's; else it is built from the results.
func TestEPBudgetOf(t *testing.T) {
	r := fixture.DeepEP()
	if r.EPBudget == nil || schema.EPBudgetOf(r) != r.EPBudget {
		t.Fatalf("Derive did not keep the budget")
	}
	saved := r.EPBudget
	r.EPBudget = nil
	if b := schema.EPBudgetOf(r); b == nil || b.Rows[0].Ms != saved.Rows[0].Ms {
		t.Errorf("rebuilt %+v", b)
	}
}

// The EP budget of the 4×H100 run through rdmabench with the back-to-back
// pair (testdata/gpu/h100-deepep/pair/rdmabench): built again from the
// report's results it is the one saved, and a decode layer is the pair's
// slowest rank (97.70 µs, rank 3), not the two timed apart (41.07 + 72.58
// µs there): 5.6666 ms a token; prefill stays dispatch + combine.
func TestEPBudgetOfTheH100PairRun(t *testing.T) {
	data, err := os.ReadFile("../../testdata/gpu/h100-deepep/pair/rdmabench/report.json")
	if err != nil {
		t.Fatal(err)
	}
	var r schema.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	b := schema.BuildEPBudget(r.Results)
	if b == nil || r.EPBudget == nil || !reflect.DeepEqual(b, r.EPBudget) {
		t.Fatalf("rebuilt %+v\nsaved %+v", b, r.EPBudget)
	}
	dec, pre := b.Rows[0], b.Rows[1]
	if dec.Pair == nil || dec.Pair.Phase != "low_latency dispatch+combine (FP8)" || dec.Pair.Rank != 3 || dec.Pair.RanksSeen != 4 ||
		math.Abs(dec.LayerUS-97.70) > 1e-9 || math.Abs(dec.Ms-97.70*58/1000) > 1e-9 {
		t.Errorf("decode row %+v (pair %+v): want the pair's 97.70 µs at rank 3, 5.6666 ms a token", dec, dec.Pair)
	}
	if apart := dec.Dispatch.AvgUS + dec.Combine.AvgUS; apart <= dec.LayerUS {
		t.Errorf("timed apart %.2f µs is not above the pair's %.2f", apart, dec.LayerUS)
	}
	if pre.Pair != nil || math.Abs(pre.LayerUS-(432.12+606.49)) > 1e-9 || math.Abs(pre.Ms-60.24) > 0.005 {
		t.Errorf("prefill row %+v: want dispatch + combine, no pair, 60.24 ms a pass", pre)
	}
	t.Logf("decode %.2f µs a layer (pair, rank %d) = %.2f ms a token; prefill %.2f µs = %.2f ms a pass", dec.LayerUS, dec.Pair.Rank, dec.Ms, pre.LayerUS, pre.Ms)
}
