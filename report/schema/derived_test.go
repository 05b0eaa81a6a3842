package schema_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// The waterfall of the planted pair, golden: layers in order, each as a
// percent of the line rate and of the best layer of the level below.
func TestWaterfallGolden(t *testing.T) {
	r := fixture.Trust()
	wfs := schema.BuildWaterfalls(r.Results, r.Run.LineRate)
	if len(wfs) != 1 {
		t.Fatalf("want one waterfall (pair a ↔ b), got %d: %+v", len(wfs), wfs)
	}
	w := wfs[0]
	var names []string
	for _, l := range w.Layers {
		names = append(names, l.Layer)
	}
	want := "ib_write_bw host,ib_write_bw GPU,ucx_perftest,nixlbench LIBFABRIC,nixlbench UCX,nccl sendrecv"
	if strings.Join(names, ",") != want {
		t.Errorf("layers %v, want %s", names, want)
	}
	// GPU 360 of host 390 = 92.31%; NCCL 297 of the best NIXL (UCX 330) = 90%.
	if p := *w.Layers[1].PctOfBelow; math.Abs(p-92.3077) > 0.001 {
		t.Errorf("GPU %% of host = %v", p)
	}
	if l := w.Layers[5]; l.Below != "nixlbench UCX" || math.Abs(*l.PctOfBelow-90) > 1e-9 || math.Abs(*l.PctLineRate-74.25) > 1e-9 {
		t.Errorf("nccl layer %+v", l)
	}
	if l := w.Layers[3]; l.Below != "ucx_perftest" {
		t.Errorf("LIBFABRIC compared with %q, want ucx_perftest", l.Below)
	}
	data, _ := json.MarshalIndent(wfs, "", "  ")
	fixture.Golden(t, "waterfall.golden", append(data, '\n'))
}

// A run without a line rate: each pair's waterfall takes the lowest rate
// its layers' results were judged against (a one-host GPU pair's NVLink);
// a rate the run sets wins.
func TestWaterfallLineRateFromResults(t *testing.T) {
	nvlink := &schema.LineRate{Bps: 3.824928e12, Source: schema.LineRateNVLink}
	rs := []schema.Result{
		{Test: "gpu-copy", Tool: "gpu_copy", Family: "nccl-tests", From: "decode-0", To: "prefill-0", Verdict: schema.VerdictPass, BestBps: 3.18488e12, LineRate: nvlink},
		{Test: "nixlbench-read", Tool: "nixlbench", Family: "nixlbench", Backend: "UCX", Op: "READ", From: "decode-0", To: "prefill-0", Verdict: schema.VerdictPass, BestBps: 2.357e12, LineRate: nvlink},
		{Test: "ucx", Tool: "ucx_perftest", Family: "ucx_perftest", From: "decode-0", To: "prefill-0", Verdict: schema.VerdictPass, BestBps: 9.5e12},
	}
	none := &schema.LineRate{Source: schema.LineRateNone}
	for _, c := range []struct {
		run  *schema.LineRate
		want float64
	}{{nil, nvlink.Bps}, {none, nvlink.Bps}, {&schema.LineRate{Bps: 4e12, Source: schema.LineRateDeclared}, 4e12}} {
		wfs := schema.BuildWaterfalls(rs, c.run)
		if len(wfs) != 1 || wfs[0].LineRateBps != c.want || wfs[0].Layers[0].PctLineRate == nil {
			t.Fatalf("run rate %+v: %+v, want the waterfall at %v", c.run, wfs, c.want)
		}
		if p := *wfs[0].Layers[0].PctLineRate; math.Abs(p-100*3.18488e12/c.want) > 1e-9 {
			t.Errorf("run rate %+v: GPU copy at %v %% of the line", c.run, p)
		}
	}
}

// Planted matrix: ep-3 is in every low pair; ep-0 → ep-1 recovered.
func TestLowPairsNameTheSuspect(t *testing.T) {
	a := fixture.Trust().LowPairs[0]
	if a.Pairs != 12 || len(a.Low) != 7 {
		t.Fatalf("pairs %d low %d: %+v", a.Pairs, len(a.Low), a.Low)
	}
	if want := "ep-3 is in 6 of 6 low pairs: suspect ep-3 (node gpu-node-03, mlx5_3)"; a.Findings[0] != want {
		t.Errorf("finding %q, want %q", a.Findings[0], want)
	}
	var noise []string
	for _, lp := range a.Low {
		if lp.Status == schema.LowPairNoise {
			noise = append(noise, lp.From+"→"+lp.To)
		} else if lp.Status != schema.LowPairBad {
			t.Errorf("%s → %s: status %s", lp.From, lp.To, lp.Status)
		}
	}
	if strings.Join(noise, ",") != "ep-0→ep-1" {
		t.Errorf("noise %v", noise)
	}
	if len(a.Suspects) != 1 || a.Suspects[0].Kind != "endpoint" || a.Suspects[0].Name != "ep-3" {
		t.Errorf("suspects %+v", a.Suspects)
	}
	// Threshold: 80% of the best pair (ep-1 → ep-0: 380 − 1 = 379 Gb/s;
	// ep-0 → ep-1 is the planted noise at 200).
	if math.Abs(a.ThresholdBps-0.8*379e9) > 1 {
		t.Errorf("threshold %v", a.ThresholdBps)
	}
}

// One throttled link both ways: the link is the suspect, not an endpoint;
// with of: expectation the threshold is the expectation's.
func TestLowPairsLinkAndExpectation(t *testing.T) {
	var rs []schema.Result
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if i != j {
				bps := 100e9
				if (i == 1 && j == 2) || (i == 2 && j == 1) {
					bps = 10e9
				}
				rs = append(rs, fixture.Planted("m", "iperf3", fmt.Sprintf("ep-%d", i), fmt.Sprintf("ep-%d", j), bps, nil))
			}
		}
	}
	a := schema.AnalyzeLowPairs(rs, nil, "m", schema.LowPairRule{BelowPct: 50, Of: "expectation", ExpectBps: 90e9})
	if a.ThresholdBps != 45e9 || len(a.Low) != 2 || a.Low[0].Status != schema.LowPairUntested {
		t.Fatalf("%+v", a)
	}
	if len(a.Suspects) != 1 || a.Suspects[0].Kind != "link" || a.Suspects[0].Name != "ep-1 ↔ ep-2" {
		t.Errorf("suspects %+v (findings %q)", a.Suspects, a.Findings)
	}
	if got := schema.LowPairs(rs, "m", schema.LowPairRule{BelowPct: 50, Of: "best"}); len(got) != 2 {
		t.Errorf("retest list %v", got)
	}
	none := schema.AnalyzeLowPairs(rs, nil, "m", schema.LowPairRule{BelowPct: 5, Of: "best"})
	if len(none.Low) != 0 || !strings.HasPrefix(none.Findings[0], "no pair of 6 below") {
		t.Errorf("%+v", none)
	}
	// of: expectation with minLineRate and no line rate: no reference, and
	// the finding says why instead of "no pair low".
	unjudged := schema.AnalyzeLowPairs(rs, nil, "m", schema.LowPairRule{BelowPct: 50, Of: "expectation"})
	if len(unjudged.Low) != 0 || len(unjudged.Findings) != 1 ||
		!strings.HasPrefix(unjudged.Findings[0], "low pairs not judged among 6 pairs: the expectation is minLineRate and this run has no line rate") {
		t.Errorf("%+v", unjudged)
	}
}

// The KV arithmetic against hand computation.
func TestKVBudgetArithmetic(t *testing.T) {
	r := fixture.Trust()
	b := r.KVBudget
	// Llama-3.1-70B, bf16: 80 layers × 2 (K, V) × 8 KV heads × 128 × 2 B
	// = 327,680 B per token. Decode TP 8 over 8 KV heads: a rank pulls 1/8.
	// Block: 16 tokens × (8 heads / TP 8 = 1 head) × 128 × 2 B = 4,096 B,
	// so nixlbench is read at 4 KiB: UCX 40 Gb/s, LIBFABRIC 20 Gb/s.
	if b.BytesPerToken != 327680 || b.RankShare != 0.125 || b.BlockBytes != 4096 {
		t.Fatalf("shape %+v", b)
	}
	if len(b.Rows) != 3 || b.Rows[0].Backend != "LIBFABRIC" || b.Rows[1].Backend != "UCX" || b.Rows[2].Source != "line rate" {
		t.Fatalf("rows %+v", b.Rows)
	}
	// 4096 tokens: request 4096 × 327,680 = 1,342,177,280 B; rank share
	// 167,772,160 B. UCX at 40e9 b/s: 167,772,160 × 8 / 40e9 = 33.554432 ms.
	// Line rate 400e9: 3.3554432 ms. 32768 tokens (8×): 268.435456 ms on UCX.
	// LIBFABRIC at 20e9: 67.108864 ms.
	for _, c := range []struct {
		row, ctx  int
		req, rank int64
		ms        float64
	}{{1, 0, 1342177280, 167772160, 33.554432}, {2, 0, 1342177280, 167772160, 3.3554432},
		{1, 1, 10737418240, 1342177280, 268.435456}, {0, 0, 1342177280, 167772160, 67.108864}} {
		got := b.Rows[c.row].Costs[c.ctx]
		if got.RequestBytes != c.req || got.RankBytes != c.rank || math.Abs(got.TTFTms-c.ms) > 1e-9 {
			t.Errorf("row %d ctx %d: %+v, want %d / %d B, %v ms", c.row, c.ctx, got, c.req, c.rank, c.ms)
		}
	}
	// DeepSeek-V3 (MLA), bf16: 61 layers × 576 × 2 B = 70,272 B per token;
	// every decode rank holds the whole latent (share 1). Block 16 × 576 ×
	// 2 = 18,432 B (nearest planted size 16 KiB? no: 4 KiB and 64 KiB;
	// log2 distances 2.17 and 1.83, so 64 KiB). No nixlbench READ here, so
	// the best ib_write_bw: 390 Gb/s. 1000 tokens: 70,272,000 B × 8 /
	// 390e9 = 1.441476923 ms.
	ds := &schema.ServingSetup{Layers: 61, LatentDim: 576, KVDtype: "bf16", DtypeBytes: 2, ContextLengths: []int{1000}, PrefillTP: 8, DecodeTP: 4, BlockTokens: 16}
	var noNixl []schema.Result
	for _, x := range r.Results {
		if x.Tool != "nixlbench" {
			noNixl = append(noNixl, x)
		}
	}
	mb := schema.BuildKVBudget(ds, noNixl, nil)
	if mb.BytesPerToken != 70272 || mb.RankShare != 1 || mb.BlockBytes != 18432 || len(mb.Rows) != 1 {
		t.Fatalf("MLA %+v", mb)
	}
	if c := mb.Rows[0].Costs[0]; c.RankBytes != 70272000 || math.Abs(c.TTFTms-1.441476923) > 1e-6 || mb.Rows[0].Bps != 390e9 {
		t.Errorf("MLA cost %+v", mb.Rows[0])
	}
	if _, at, _ := schema.NearestSample(&r.Results[4], 18432); at != 64<<10 {
		t.Errorf("nearest to 18 KiB: %d", at)
	}
	if schema.BuildKVBudget(nil, r.Results, nil) != nil {
		t.Error("no serving, no budget")
	}
}
