package text

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// The terminal shows the three views under the summary.
func TestInsightsInTerminal(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, fixture.Trust()); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "trust-summary.txt", buf.Bytes())
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
	s := &schema.ServingSetup{Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16", DtypeBytes: 2,
		ContextLengths: []int{256, 1024}, PrefillTP: 1, DecodeTP: 1, BlockTokens: 16}
	// nixlbench prints its latency per descriptor (the transfer's time over
	// the batch): a 256-token request is 16 blocks × 64 regions = 1024
	// descriptors of 32 KiB, a 1024-token one 4096.
	lat := func(requestUS float64, tokens int) []parsers.Sample {
		batch := int64(tokens / 16 * 64)
		us := requestUS / float64(batch)
		return []parsers.Sample{{Bytes: 32768, Batch: batch, LatAvgUS: &us}}
	}
	res := []schema.Result{
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX", RequestTokens: 256, Verdict: schema.VerdictPass, Samples: lat(1500, 256), From: "d-0", To: "p-0"},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX", RequestTokens: 256, Verdict: schema.VerdictPass, Samples: lat(2500, 256), From: "d-1", To: "p-1"},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX", RequestTokens: 1024, Verdict: schema.VerdictPass, Samples: lat(8000, 1024)},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "LIBFABRIC", RequestTokens: 256, Verdict: schema.VerdictPass, Samples: lat(40000, 256)},
		{Test: "kv", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "LIBFABRIC", RequestTokens: 1024, Verdict: schema.VerdictError},
	}
	b := schema.BuildKVBudget(s, res, nil)
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
	rows := KVRows(b)
	if !strings.Contains(rows[1][1], "(measured)") || rows[1][2] != "2.50 ms (32MiB / 32MiB)" || rows[0][3] != "not measured" {
		t.Errorf("rendered %q", rows[:2])
	}
}

// The EP budget under the summary, beside the KV budget: the real 4×H100
// run, each phase's slowest rank named.
func TestEPBudgetInTerminal(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, fixture.DeepEP()); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "deepep-summary.txt", buf.Bytes())
	for _, want := range []string{"EP budget:", "38.06 µs (rank 2 of 4, FP8)", "64.04 µs (rank 3 of 4, BF16)", "5.92 ms per output token (TPOT)",
		"611.06 µs (rank 1 of 4, BF16)", "60.63 ms per prefill pass (TTFT)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, buf.String())
		}
	}
}

// A DeepEP result's per-rank table: a row per phase, a column per rank.
func TestEPRankRows(t *testing.T) {
	head, rows := EPRankRows(&fixture.DeepEP().Results[0])
	if strings.Join(head, ",") != "phase,rank 0,rank 1,rank 2,rank 3" || len(rows) != 4 {
		t.Fatalf("head %v, %d rows", head, len(rows))
	}
	if got := strings.Join(rows[3], " "); got != "low_latency combine (BF16) 62.61 63.17 63.04 64.04" {
		t.Errorf("last row %q", got)
	}
	if _, rows := EPRankRows(&schema.Result{Family: parsers.FamilyNCCL}); rows != nil {
		t.Errorf("an NCCL result has rows %v", rows)
	}
}

// The cross-rail check in the terminal: the verdict, every rail pair, the
// blocked one named with why, and the HCA settings to serve with.
func TestRailReachInTerminal(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteInsights(&buf, fixture.RailReach()); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "railreach-insights.txt", buf.Bytes())
	for _, want := range []string{"Every expert can cross? cross-rails: not WideEP-ready",
		"1 of 4 rail pairs cannot reach each other: vm2 rail0 (rxe0) → vm1 rail1 (rxe1)",
		"NCCL_IB_HCA==rxe0:1,rxe1:1", "NCCL_CROSS_NIC=0", "NVSHMEM_HCA_LIST=rxe0:1", "DEEP_EP_DEVICE_TO_HCA_MAPPING=0:rxe0:1"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, buf.String())
		}
	}
}
