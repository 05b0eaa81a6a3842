package benchreport

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// Build is the run as a partial Benchmark Report v0.2. Pure.
func Build(r *schema.Report) *Report {
	out := &Report{
		Version: Version,
		Run: Run{UID: r.Run.ID, Time: runTime(r.Run),
			Description: fmt.Sprintf("rdmabench %s: the RDMA fabric under the serving stack (run %s)", r.Run.Scenario, r.Run.ID)},
		Scenario: &Scenario{Stack: []Component{component(r)}},
	}
	s := schema.CountVerdicts(r.Results)
	f := &Fabric{SchemaVersion: FabricSchemaVersion, ComponentLabel: ComponentLabel, ReportSchema: r.SchemaVersion,
		Verdicts: Verdicts{Total: s.Total, Pass: s.Pass, Fail: s.Fail, Error: s.Error, Skipped: s.Skipped, Invalid: s.Invalid},
		LineRate: lineRate(r.Run.LineRate), LinkMatrix: []MatrixSummary{}, Pairs: []Pair{}}
	for i := range r.Results {
		f.Pairs = append(f.Pairs, pair(r, &r.Results[i]))
	}
	f.LinkMatrix = matrix(f.Pairs)
	f.KVBudget = kvBudget(r)
	f.EPBudget = epBudget(r)
	out.Results.Observability = &Observability{Fabric: f}
	return out
}

func runTime(m schema.RunMeta) *RunTime {
	t := &RunTime{Start: m.Start.UTC().Format(time.RFC3339Nano)}
	if !m.End.IsZero() {
		t.End = m.End.UTC().Format(time.RFC3339Nano)
		t.Duration = fmt.Sprintf("PT%gS", math.Round(m.End.Sub(m.Start).Seconds()*1000)/1000)
	}
	return t
}

func component(r *schema.Report) Component {
	return Component{
		Metadata: ComponentMetadata{SchemaVersion: "0.0.1", Label: ComponentLabel, CfgID: r.Run.ScenarioHash,
			Description: "the RDMA fabric between the serving pods, as rdmabench measured it"},
		Standardized: FabricComponent{Kind: "generic", Tool: "rdmabench", ToolVersion: r.Run.Version, Backend: r.Run.Backend,
			Nodes: r.Run.Nodes, LineRate: lineRate(r.Run.LineRate), Tools: r.Run.ToolVersions, Fingerprint: r.Run.Fingerprint},
		Native: ComponentNative{Config: &NativeConfig{ScenarioName: r.Run.Scenario, ScenarioFile: r.Run.ScenarioFile, ScenarioSHA256: r.Run.ScenarioHash}},
	}
}

func lineRate(l *schema.LineRate) *LineRate {
	if l == nil || l.Bps <= 0 {
		return nil
	}
	return &LineRate{GbitPerS: gbit(l.Bps), Source: l.Source, Detail: l.Detail}
}

func gbit(bps float64) float64 { return math.Round(bps/1e6) / 1e3 }

func ptr[T any](v T) *T { return &v }

func pair(r *schema.Report, res *schema.Result) Pair {
	p := Pair{Test: res.Test, Tool: res.Tool, Op: res.Op, Backend: res.Backend, From: res.From, To: res.To,
		Verdict: res.Verdict, Reason: res.Reason, SameMachine: res.SameMachine}
	if p.From == "" && p.To == "" && len(res.Ranks) > 0 {
		p.From = res.RankLabel()
	}
	for _, e := range res.Endpoints {
		switch e.Name {
		case res.From:
			p.FromNode = e.Node
		case res.To:
			p.ToNode = e.Node
		}
	}
	if res.BestBps > 0 {
		p.GbitPerS = ptr(gbit(res.BestBps))
	}
	if lr := res.LineRateBps(&r.Run); lr > 0 && res.BestBps > 0 {
		p.LineRateGbitPerS = ptr(gbit(lr))
	}
	if res.Efficiency != nil {
		p.LineRatePct = ptr(math.Round(*res.Efficiency*100) / 100)
	}
	if res.BestBps == 0 && len(res.Samples) > 0 {
		if v, ok := parsers.Figure(parsers.MetricLatency, &res.Samples[0]); ok {
			p.LatencyUS = ptr(v)
		}
	}
	if t := res.Transport; t != nil {
		p.Transport = &Transport{Kind: t.Kind, Source: t.Source, Detail: t.Detail, Devices: t.Devices, GDR: t.GDR, Evidence: t.Evidence}
	}
	if res.Path != nil {
		p.PathVerified = ptr(res.Path.Verified)
	}
	for _, c := range schema.PairKVCosts(r.Serving, res) {
		p.KVTransfer = append(p.KVTransfer, kvCost(c, res.RequestTokens > 0))
	}
	return p
}

func kvCost(c schema.KVCost, measured bool) KVCost {
	return KVCost{ContextTokens: c.Tokens, RequestBytes: c.RequestBytes, RankBytes: c.RankBytes,
		TTFTms: math.Round(c.TTFTms*1e4) / 1e4, Measured: measured, Missing: c.Missing}
}

// matrix sums each test's pairs up, in the order the tests first appear.
func matrix(pairs []Pair) []MatrixSummary {
	var out []MatrixSummary
	index := map[string]int{}
	pcts := map[string][]float64{}
	worst := map[string]float64{}
	for _, p := range pairs {
		i, ok := index[p.Test]
		if !ok {
			i = len(out)
			index[p.Test] = i
			out = append(out, MatrixSummary{Test: p.Test, Tool: p.Tool, Op: p.Op})
		}
		m := &out[i]
		m.Pairs++
		switch p.Verdict {
		case schema.VerdictPass:
			m.Passed++
		case schema.VerdictFail, schema.VerdictInvalid:
			m.Short++
		}
		if p.LineRatePct == nil {
			continue
		}
		v := *p.LineRatePct
		pcts[p.Test] = append(pcts[p.Test], v)
		if w, seen := worst[p.Test]; !seen || v < w {
			worst[p.Test] = v
			m.WorstPair = p.From + "->" + p.To
		}
	}
	for i := range out {
		v := pcts[out[i].Test]
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		out[i].MinLineRatePct, out[i].MedianLineRatePct, out[i].MaxLineRatePct = ptr(v[0]), ptr(math.Round(med*100)/100), ptr(v[len(v)-1])
	}
	if out == nil {
		out = []MatrixSummary{}
	}
	return out
}

// epBudget is the report's EP budget, a row per test and stage.
func epBudget(r *schema.Report) []EPCost {
	b := schema.EPBudgetOf(r)
	if b == nil {
		return nil
	}
	var out []EPCost
	for _, c := range b.Rows {
		out = append(out, EPCost{Test: c.Test, Stage: c.Stage, Kernels: c.Kernels, Ranks: c.Ranks, TokensPerRank: c.Tokens,
			DispatchUS: c.Dispatch.AvgUS, DispatchRank: c.Dispatch.Rank, CombineUS: c.Combine.AvgUS, CombineRank: c.Combine.Rank,
			MoELayers: c.MoELayers, Ms: math.Round(c.Ms*1e4) / 1e4})
	}
	return out
}

func kvBudget(r *schema.Report) *KVBudget {
	b := schema.KVBudgetOf(r)
	if b == nil {
		return nil
	}
	out := &KVBudget{BytesPerToken: b.BytesPerToken, RankShare: b.RankShare, Sources: []KVSource{}}
	if r.Serving != nil {
		out.Model = r.Serving.Model
	}
	for _, row := range b.Rows {
		src := KVSource{Source: row.Source, Backend: row.Backend, Test: row.Test, GbitPerS: gbit(row.Bps), Costs: []KVCost{}}
		for _, c := range row.Costs {
			src.Costs = append(src.Costs, kvCost(c, row.Measured))
		}
		out.Sources = append(out.Sources, src)
	}
	return out
}
