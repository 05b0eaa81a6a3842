package benchreport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rdmabench/rdmabench/parsers"
	rfixture "github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// update is the -update flag (the fixture package's, shared by report's
// tests): rewrite testdata/*.golden.json.
var update = rfixture.Update

// The upstream schema this partial follows: Benchmark Report v0.2, read in
// llm-d-benchmark at commit 8bc9f1ddd873a24f1657d6cca2e0d0fb6947dd36
// (llmdbenchmark/analysis/benchmark_report/br_v0_2_json_schema.json and
// schema_v0_2.py). RDMABENCH_BR_SCHEMA may name a copy of that file: the
// tests then validate against it too.
const upstream = "llm-d-benchmark Benchmark Report v0.2"

func fixture(t *testing.T) *schema.Report {
	t.Helper()
	r, err := schema.Load("../../testdata/report/full.json")
	if err != nil {
		t.Fatal(err)
	}
	r.Serving = &schema.ServingSetup{Model: "deepseek-ai/DeepSeek-V3", Layers: 61, LatentDim: 576, KVDtype: "bf16", DtypeBytes: 2,
		ContextLengths: []int{1000, 8000}, PrefillTP: 8, DecodeTP: 4, BlockTokens: 16}
	bw, lat := 350e9, 900.0
	eps := []schema.ResultEndpoint{{Role: "initiator", Name: "decode-1", Node: "gpu-node-2"}, {Role: "target", Name: "prefill-1", Node: "gpu-node-1"}}
	r.Results = append(r.Results,
		schema.Result{Test: "kv-read", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX",
			From: "prefill-1", To: "decode-1", Endpoints: eps, Verdict: schema.VerdictPass, BestBps: bw,
			Samples: []parsers.Sample{{Bytes: 18432, BWAvgBps: &bw}}, Transport: &parsers.Transport{Kind: "rdma", Source: "ucx", Detail: "rc_mlx5", Devices: []string{"mlx5_0:1"}}},
		schema.Result{Test: "kv-request", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Op: "READ", Backend: "UCX", RequestTokens: 8000,
			From: "prefill-1", To: "decode-1", Endpoints: eps, Verdict: schema.VerdictPass,
			Samples: []parsers.Sample{{Bytes: 18432, Batch: 4, LatAvgUS: &lat}}},
		rfixture.DeepEP().Results[0])
	r.KVBudget, r.EPBudget = nil, nil
	return r
}

func validator(t *testing.T, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func written(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The partial is a valid Benchmark Report v0.2 by that schema's rules:
// version 0.2, run.uid, the fabric as a generic stack component, its
// measurements in results.observability.rdma_fabric; and a field the
// schema does not name is refused, as upstream refuses it.
func TestPartialFollowsBenchmarkReportV02(t *testing.T) {
	if Version != "0.2" {
		t.Fatalf("writes %s, not %s", Version, upstream)
	}
	data := written(t, Build(fixture(t)))
	s := validator(t, JSONSchema)
	if err := validate(s, data); err != nil {
		t.Fatalf("not a valid %s partial: %v", upstream, err)
	}
	if path := os.Getenv("RDMABENCH_BR_SCHEMA"); path != "" {
		up, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(validator(t, up), data); err != nil {
			t.Errorf("%s (%s) refuses it: %v", upstream, path, err)
		}
	}
	for _, extra := range []struct{ at, field string }{
		{`"run": {`, `"run": {"color": "blue", `},
		{`"results": {`, `"results": {"fabric": {}, `},
		{`"rdma_fabric": {`, `"rdma_fabric": {"extra": 1, `},
		{`"metadata": {`, `"metadata": {"owner": "me", `},
	} {
		bad := strings.Replace(string(data), extra.at, extra.field, 1)
		if err := validate(s, []byte(bad)); err == nil {
			t.Errorf("%s: an extra field passed", extra.field)
		}
	}
	golden(t, "full.golden.json", data)
}

// Per pod pair: the KV transfer of one request (measured by a perRequest
// nixlbench, else computed from the pair's READ bandwidth) and what it adds
// to TTFT; the link matrix's spread and worst pair; line rates; transport.
func TestPartialCarriesTheFabric(t *testing.T) {
	f := Build(fixture(t)).Results.Observability.Fabric
	byTest := map[string]Pair{}
	for _, p := range f.Pairs {
		byTest[p.Test] = p
	}
	read, req := byTest["kv-read"], byTest["kv-request"]
	if len(read.KVTransfer) != 2 || read.KVTransfer[0].Measured || read.KVTransfer[1].ContextTokens != 8000 || read.KVTransfer[1].TTFTms <= read.KVTransfer[0].TTFTms {
		t.Errorf("kv-read per request: %+v", read.KVTransfer)
	}
	// 61 layers × 576 × 2 bytes = 70272 bytes a token; MLA: every rank pulls it all.
	if c := read.KVTransfer[0]; c.RequestBytes != 70272*1000 || c.RankBytes != c.RequestBytes || c.TTFTms != 1.6062 {
		t.Errorf("1000 tokens over 350 Gb/s: %+v", c)
	}
	if len(req.KVTransfer) != 1 || !req.KVTransfer[0].Measured || req.KVTransfer[0].TTFTms != 3.6 {
		t.Errorf("measured request (900 µs a descriptor × 4): %+v", req.KVTransfer)
	}
	if read.FromNode != "gpu-node-1" || read.ToNode != "gpu-node-2" || read.Transport == nil || read.Transport.Detail != "rc_mlx5" {
		t.Errorf("pair %+v", read)
	}
	var a2a *MatrixSummary
	for i := range f.LinkMatrix {
		if f.LinkMatrix[i].Test == "fabric-a2a" {
			a2a = &f.LinkMatrix[i]
		}
	}
	if a2a == nil || a2a.Pairs != 56 || a2a.Short != 1 || a2a.WorstPair != "ep-3->ep-5" || *a2a.MinLineRatePct != 44.13 {
		t.Errorf("link matrix %+v", a2a)
	}
	if f.LineRate == nil || f.LineRate.GbitPerS != 400 || f.KVBudget == nil || len(f.KVBudget.Sources) < 2 {
		t.Errorf("line rate %+v, KV budget %+v", f.LineRate, f.KVBudget)
	}
	// The EP budget of the real 4×H100 DeepEP run: per output token and per
	// prefill pass, each phase's slowest rank named.
	want := []EPCost{
		{Test: "deepep-fp8", Stage: "decode", Kernels: "low_latency", Ranks: 4, TokensPerRank: 128, DispatchUS: 38.06, DispatchRank: 2,
			CombineUS: 64.04, CombineRank: 3, MoELayers: 58, Ms: 5.9218},
		{Test: "deepep-fp8", Stage: "prefill", Kernels: "normal", Ranks: 4, TokensPerRank: 4096, DispatchUS: 434.32, DispatchRank: 2,
			CombineUS: 611.06, CombineRank: 1, MoELayers: 58, Ms: 60.632},
	}
	if len(f.EPBudget) != 2 || f.EPBudget[0] != want[0] || f.EPBudget[1] != want[1] {
		t.Errorf("EP budget %+v, want %+v", f.EPBudget, want)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(want, got) {
		var w, g any
		_ = json.Unmarshal(want, &w)
		_ = json.Unmarshal(got, &g)
		t.Errorf("%s differs (go test ./report/benchreport -update after checking):\n%s", path, got)
	}
}
