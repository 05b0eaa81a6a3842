package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
)

func bwSamples(bytesBps map[int64]float64) []parsers.Sample {
	var out []parsers.Sample
	for _, b := range []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20} {
		if v, ok := bytesBps[b]; ok {
			v := v
			out = append(out, parsers.Sample{Bytes: b, BWAvgBps: &v})
		}
	}
	return out
}

func planted(test, tool, from, to string, bps float64, mod func(*Result)) Result {
	r := Result{Test: test, Tool: tool, From: from, To: to, Verdict: VerdictPass, BestBps: bps, BestBytes: 1 << 20,
		Samples: bwSamples(map[int64]float64{1 << 20: bps})}
	upgradeResult(&r) // the family and metric the runner would have set
	if mod != nil {
		mod(&r)
	}
	return r
}

// trustReport is planted data for the three views: one pair (a, b)
// measured at every layer, a 4-endpoint all-to-all matrix in which every
// pair of ep-3 is slow and ep-0 → ep-1 was slow once, and a serving setup.
func trustReport() *Report {
	lr := &LineRate{Bps: 400e9, Source: LineRateDeclared, Detail: "scenario"}
	rs := []Result{
		planted("host", "ib_write_bw", "a", "b", 390e9, func(r *Result) { r.Commands = []string{"ib_write_bw -d mlx5_0 -F --report_gbits"} }),
		planted("host", "ib_write_bw", "b", "a", 388e9, nil),
		planted("gpu", "ib_write_bw", "a", "b", 360e9, func(r *Result) { r.Commands = []string{"ib_write_bw -d mlx5_0 --use_cuda=0"} }),
		planted("ucx", "ucx_perftest", "a", "b", 342e9, nil),
		planted("kv", "nixlbench", "b", "a", 330e9, func(r *Result) {
			r.Backend, r.Op = "UCX", "READ"
			r.Samples = bwSamples(map[int64]float64{4 << 10: 40e9, 64 << 10: 200e9, 1 << 20: 330e9})
		}),
		planted("kv", "nixlbench", "b", "a", 300e9, func(r *Result) {
			r.Backend, r.Op = "LIBFABRIC", "READ"
			r.Samples = bwSamples(map[int64]float64{4 << 10: 20e9, 64 << 10: 150e9, 1 << 20: 300e9})
		}),
		planted("p2p", "sendrecv_perf", "", "", 297e9, func(r *Result) { r.Ranks = []string{"a/gpu0", "b/gpu0"} }),
		planted("lat", "ib_write_lat", "a", "b", 0, nil), // no layer
	}
	eps := []EndpointInfo{{Name: "a", Node: "n1"}, {Name: "b", Node: "n2"}}
	for i := 0; i < 4; i++ {
		eps = append(eps, EndpointInfo{Name: fmt.Sprintf("ep-%d", i), Node: fmt.Sprintf("gpu-node-%02d", i), Device: fmt.Sprintf("mlx5_%d", i)})
	}
	rule := LowPairRule{BelowPct: 80, Of: "best", Retests: 2}
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			if i == j {
				continue
			}
			from, to := fmt.Sprintf("ep-%d", i), fmt.Sprintf("ep-%d", j)
			bps := 380e9 - float64(i+j)*1e9
			switch {
			case i == 3 || j == 3:
				bps = 150e9
			case i == 0 && j == 1:
				bps = 200e9 // noise: recovers on retest
			}
			rs = append(rs, planted("a2a", "ib_write_bw", from, to, bps, func(r *Result) {
				r.Pattern = "all-to-all"
				if bps < 300e9 {
					r.Verdict = VerdictFail
				}
			}))
			if bps < 300e9 {
				for n := 1; n <= 2; n++ {
					again := bps
					if i == 0 && j == 1 {
						again = 379e9
					}
					rs = append(rs, planted("a2a", "ib_write_bw", from, to, again, func(r *Result) { r.Retest, r.Pattern = n, "all-to-all" }))
				}
			}
		}
	}
	r := &Report{SchemaVersion: SchemaVersion, Run: RunMeta{ID: "trust", Scenario: "trust", Start: fixtureStart, LineRate: lr, Backend: "local"},
		Endpoints: eps, Results: rs,
		Serving: &ServingSetup{Model: "llama-3.1-70b", Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16", DtypeBytes: 2,
			ContextLengths: []int{4096, 32768}, PrefillTP: 8, DecodeTP: 8, BlockTokens: 16}}
	r.LowPairs = []LowPairAnalysis{AnalyzeLowPairs(rs, eps, "a2a", rule)}
	r.Summary = CountVerdicts(rs)
	Derive(r)
	return r
}

// The waterfall of the planted pair, golden: layers in order, each as a
// percent of the line rate and of the best layer of the level below.
func TestWaterfallGolden(t *testing.T) {
	r := trustReport()
	wfs := BuildWaterfalls(r.Results, r.Run.LineRate)
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
	golden(t, "waterfall.golden", append(data, '\n'))
}

// Planted matrix: ep-3 is in every low pair; ep-0 → ep-1 recovered.
func TestLowPairsNameTheSuspect(t *testing.T) {
	a := trustReport().LowPairs[0]
	if a.Pairs != 12 || len(a.Low) != 7 {
		t.Fatalf("pairs %d low %d: %+v", a.Pairs, len(a.Low), a.Low)
	}
	if want := "ep-3 is in 6 of 6 low pairs: suspect ep-3 (node gpu-node-03, mlx5_3)"; a.Findings[0] != want {
		t.Errorf("finding %q, want %q", a.Findings[0], want)
	}
	var noise []string
	for _, lp := range a.Low {
		if lp.Status == LowPairNoise {
			noise = append(noise, lp.From+"→"+lp.To)
		} else if lp.Status != LowPairBad {
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
	var rs []Result
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if i != j {
				bps := 100e9
				if (i == 1 && j == 2) || (i == 2 && j == 1) {
					bps = 10e9
				}
				rs = append(rs, planted("m", "iperf3", fmt.Sprintf("ep-%d", i), fmt.Sprintf("ep-%d", j), bps, nil))
			}
		}
	}
	a := AnalyzeLowPairs(rs, nil, "m", LowPairRule{BelowPct: 50, Of: "expectation", ExpectBps: 90e9})
	if a.ThresholdBps != 45e9 || len(a.Low) != 2 || a.Low[0].Status != LowPairUntested {
		t.Fatalf("%+v", a)
	}
	if len(a.Suspects) != 1 || a.Suspects[0].Kind != "link" || a.Suspects[0].Name != "ep-1 ↔ ep-2" {
		t.Errorf("suspects %+v (findings %q)", a.Suspects, a.Findings)
	}
	if got := LowPairs(rs, "m", LowPairRule{BelowPct: 50, Of: "best"}); len(got) != 2 {
		t.Errorf("retest list %v", got)
	}
	none := AnalyzeLowPairs(rs, nil, "m", LowPairRule{BelowPct: 5, Of: "best"})
	if len(none.Low) != 0 || !strings.HasPrefix(none.Findings[0], "no pair of 6 below") {
		t.Errorf("%+v", none)
	}
	// of: expectation with minLineRate and no line rate: no reference, and
	// the finding says why instead of "no pair low".
	unjudged := AnalyzeLowPairs(rs, nil, "m", LowPairRule{BelowPct: 50, Of: "expectation"})
	if len(unjudged.Low) != 0 || len(unjudged.Findings) != 1 ||
		!strings.HasPrefix(unjudged.Findings[0], "low pairs not judged among 6 pairs: the expectation is minLineRate and this run has no line rate") {
		t.Errorf("%+v", unjudged)
	}
}

// The KV arithmetic against hand computation.
func TestKVBudgetArithmetic(t *testing.T) {
	r := trustReport()
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
	ds := &ServingSetup{Layers: 61, LatentDim: 576, KVDtype: "bf16", DtypeBytes: 2, ContextLengths: []int{1000}, PrefillTP: 8, DecodeTP: 4, BlockTokens: 16}
	var noNixl []Result
	for _, x := range r.Results {
		if x.Tool != "nixlbench" {
			noNixl = append(noNixl, x)
		}
	}
	mb := BuildKVBudget(ds, noNixl, nil)
	if mb.BytesPerToken != 70272 || mb.RankShare != 1 || mb.BlockBytes != 18432 || len(mb.Rows) != 1 {
		t.Fatalf("MLA %+v", mb)
	}
	if c := mb.Rows[0].Costs[0]; c.RankBytes != 70272000 || math.Abs(c.TTFTms-1.441476923) > 1e-6 || mb.Rows[0].Bps != 390e9 {
		t.Errorf("MLA cost %+v", mb.Rows[0])
	}
	if _, at, _ := nearestSample(&r.Results[4], 18432); at != 64<<10 {
		t.Errorf("nearest to 18 KiB: %d", at)
	}
	if BuildKVBudget(nil, r.Results, nil) != nil {
		t.Error("no serving, no budget")
	}
}

// The terminal shows the three views under the summary.
func TestInsightsInTerminal(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, trustReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "trust-summary.txt", buf.Bytes())
	for _, want := range []string{"Waterfall a ↔ b:", "nccl sendrecv", "suspect ep-3 (node gpu-node-03, mlx5_3)", "noise, not a bad link", "KV-transfer budget", "33.55 ms"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("terminal lacks %q", want)
		}
	}
}

// Measured rows: the perRequest results' own time per transfer (the worst
// pair per backend and context), before the computed rows; a context no
// result measured says so.
func TestKVBudgetMeasured(t *testing.T) {
	s := &ServingSetup{Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16", DtypeBytes: 2,
		ContextLengths: []int{256, 1024}, PrefillTP: 1, DecodeTP: 1, BlockTokens: 16}
	// nixlbench prints its latency per descriptor (the transfer's time over
	// the batch): a 256-token request is 16 blocks × 64 regions = 1024
	// descriptors of 32 KiB, a 1024-token one 4096.
	lat := func(requestUS float64, tokens int) []parsers.Sample {
		batch := int64(tokens / 16 * 64)
		us := requestUS / float64(batch)
		return []parsers.Sample{{Bytes: 32768, Batch: batch, LatAvgUS: &us}}
	}
	res := []Result{
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX", RequestTokens: 256, Verdict: VerdictPass, Samples: lat(1500, 256), From: "d-0", To: "p-0"},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX", RequestTokens: 256, Verdict: VerdictPass, Samples: lat(2500, 256), From: "d-1", To: "p-1"},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX", RequestTokens: 1024, Verdict: VerdictPass, Samples: lat(8000, 1024)},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "LIBFABRIC", RequestTokens: 256, Verdict: VerdictPass, Samples: lat(40000, 256)},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "LIBFABRIC", RequestTokens: 1024, Verdict: VerdictError},
	}
	b := BuildKVBudget(s, res, nil)
	if len(b.Rows) < 2 || !b.Rows[0].Measured || b.Rows[0].Backend != "LIBFABRIC" || !b.Rows[1].Measured || b.Rows[1].Backend != "UCX" {
		t.Fatalf("rows %+v", b.Rows)
	}
	ucx := b.Rows[1]
	// 256 tokens: the worst pair, 2.5 ms; 1024: 8 ms. A rank pulls all of a
	// 131,072 B/token request at TP 1: 33,554,432 B and 134,217,728 B.
	if c := ucx.Costs[0]; math.Abs(c.TTFTms-2.5) > 1e-9 || c.RankBytes != 33554432 || c.Missing {
		t.Errorf("UCX 256 tokens: %+v", c)
	}
	if c := ucx.Costs[1]; math.Abs(c.TTFTms-8) > 1e-9 || c.RankBytes != 134217728 {
		t.Errorf("UCX 1024 tokens: %+v", c)
	}
	if want := float64(33554432+134217728) * 8 / 0.0105; math.Abs(ucx.Bps-want) > 1e3 {
		t.Errorf("UCX measured rate %v, want %v", ucx.Bps, want)
	}
	if c := b.Rows[0].Costs[1]; !c.Missing {
		t.Errorf("LIBFABRIC 1024 tokens errored, yet %+v", c)
	}
	rows := kvRows(b)
	if !strings.Contains(rows[1][1], "(measured)") || rows[1][2] != "2.50 ms (32MiB / 32MiB)" || rows[0][3] != "not measured" {
		t.Errorf("rendered %q", rows[:2])
	}
}
