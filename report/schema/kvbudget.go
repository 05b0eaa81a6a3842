package schema

import (
	"math"
	"sort"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/scenarios"
)

// ServingSetup is the scenario's serving section as the run resolved it
// (preset and defaults filled in): what the KV budget costs.
type ServingSetup struct {
	Model     string `json:"model,omitempty"`
	Layers    int    `json:"layers"`
	KVHeads   int    `json:"kvHeads,omitempty"`
	HeadDim   int    `json:"headDim,omitempty"`
	LatentDim int    `json:"latentDim,omitempty"`
	KVDtype   string `json:"kvDtype"`
	// DtypeBytes is the size of one KV element.
	DtypeBytes     int   `json:"dtypeBytes"`
	ContextLengths []int `json:"contextLengths"`
	PrefillTP      int   `json:"prefillTP"`
	DecodeTP       int   `json:"decodeTP"`
	BlockTokens    int   `json:"blockTokens"`
}

// KVBudget is what moving one request's KV cache from prefill to decode
// costs on this fabric, per context length and per way of moving it.
type KVBudget struct {
	// BytesPerToken is the KV cache of one token over all layers.
	BytesPerToken int64 `json:"bytesPerToken"`
	// RankShare is the fraction of a request's KV one decode rank pulls
	// (1/min(decodeTP, kvHeads); 1 for MLA, whose latent every rank holds);
	// the decode ranks pull at once, each over its own NIC.
	RankShare float64 `json:"rankShare"`
	// BlockBytes is one transfer block: blockTokens of one layer's K (or V)
	// slice a rank holds; the nixlbench size the bandwidth is read at.
	BlockBytes int64      `json:"blockBytes"`
	Contexts   []int      `json:"contexts"`
	Rows       []KVSource `json:"rows"`
}

// KVSource is one bandwidth the transfer is costed at.
type KVSource struct {
	// Source is "nixlbench READ", "ib_write_bw (best, no nixlbench READ)" or "line rate".
	Source  string  `json:"source"`
	Backend string  `json:"backend,omitempty"`
	Test    string  `json:"test,omitempty"`
	Bps     float64 `json:"bps"`
	// AtBytes is the block size the bandwidth was measured at.
	AtBytes int64 `json:"atBytes,omitempty"`
	// Measured is true for a row whose costs are nixlbench's own time for
	// one request (args.perRequest): one READ of every descriptor of the
	// request, as vLLM's NIXL connector posts it. Other rows are computed
	// from a bandwidth. Bps is then the request's bytes over that time.
	Measured bool `json:"measured,omitempty"`
	// Costs has one entry per context length.
	Costs []KVCost `json:"costs"`
}

// KVCost is one context length's transfer.
type KVCost struct {
	Tokens int `json:"tokens"`
	// RequestBytes is the whole request's KV; RankBytes one decode rank's share.
	RequestBytes int64 `json:"requestBytes"`
	RankBytes    int64 `json:"rankBytes"`
	// TTFTms is what the transfer adds to time-to-first-token.
	TTFTms float64 `json:"ttftMs"`
	// Missing is set on a measured row for a context length no result
	// measured (TTFTms is then 0 and means nothing).
	Missing bool `json:"missing,omitempty"`
}

// kvShape is the arithmetic of a serving setup: the one the planner drives
// nixlbench with (scenarios.Serving.Layout).
func kvShape(s *ServingSetup) (perToken int64, share float64, block int64) {
	l := scenarios.Serving{Layers: s.Layers, KVHeads: s.KVHeads, HeadDim: s.HeadDim, LatentDim: s.LatentDim,
		PrefillTP: s.PrefillTP, DecodeTP: s.DecodeTP, BlockTokens: s.BlockTokens}.Layout(s.DtypeBytes)
	if s.LatentDim == 0 && s.KVHeads == 0 {
		return l.BytesPerToken, math.Inf(1), l.BlockBytes // a shape without heads (a hand-edited report.json)
	}
	return l.BytesPerToken, l.RankShare, l.BlockBytes
}

// BuildKVBudget costs the serving setup at the nixlbench READ bandwidth of
// each NIXL backend at the block size nearest BlockBytes (the worst pair:
// a request may land on any), else at the best ib_write_bw, and at the line
// rate. Pure; nil without a serving setup.
func BuildKVBudget(s *ServingSetup, results []Result, lineRate *LineRate) *KVBudget {
	if s == nil || s.Layers == 0 || s.DtypeBytes == 0 {
		return nil
	}
	perToken, share, block := kvShape(s)
	if perToken <= 0 || share <= 0 || math.IsInf(share, 0) { // a shape without heads (a hand-edited report.json)
		return nil
	}
	b := &KVBudget{BytesPerToken: perToken, RankShare: share, BlockBytes: block, Contexts: s.ContextLengths}
	measured := measuredSources(results, s.ContextLengths, perToken, share)
	b.Rows = nixlSources(results, block)
	if len(b.Rows) == 0 {
		if src, ok := bestWriteBW(results); ok {
			b.Rows = append(b.Rows, src)
		}
	}
	if lineRate != nil && lineRate.Bps > 0 {
		b.Rows = append(b.Rows, KVSource{Source: "line rate", Bps: lineRate.Bps})
	}
	for i := range b.Rows {
		if b.Rows[i].Measured {
			continue
		}
		for _, n := range s.ContextLengths {
			req := int64(n) * perToken
			rank := int64(math.Ceil(float64(req) * share))
			b.Rows[i].Costs = append(b.Rows[i].Costs, KVCost{Tokens: n, RequestBytes: req, RankBytes: rank,
				TTFTms: float64(rank) * 8 / b.Rows[i].Bps * 1000})
		}
	}
	b.Rows = append(measured, b.Rows...)
	return b
}

// measuredSources: per backend, the time nixlbench took to move one
// request's KV (its average latency per transfer, the worst pair), per
// context length, from the perRequest results.
func measuredSources(results []Result, contexts []int, perToken int64, share float64) []KVSource {
	type source struct{ backend, op string }
	worst := map[source]map[int]float64{} // → tokens → µs
	var order []source
	tests := map[source]string{}
	for i := range results {
		r := &results[i]
		// READ is how vLLM's connector moves it; a WRITE test (a push
		// connector) is its own row, named so.
		if r.RequestTokens <= 0 || !tool.IsKVTransfer(r.Family) || (r.Op != "READ" && r.Op != "WRITE") || r.Retest > 0 ||
			(r.Verdict != VerdictPass && r.Verdict != VerdictFail) {
			continue
		}
		us, ok := requestLatency(r)
		if !ok {
			continue
		}
		k := source{r.Backend, r.Op}
		if k.backend == "" {
			k.backend = "UCX"
		}
		if worst[k] == nil {
			worst[k] = map[int]float64{}
			order = append(order, k)
			tests[k] = r.Test
		}
		worst[k][r.RequestTokens] = max(worst[k][r.RequestTokens], us)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].backend != order[j].backend {
			return order[i].backend < order[j].backend
		}
		return order[i].op < order[j].op
	})
	var out []KVSource
	for _, k := range order {
		src := KVSource{Source: "nixlbench " + k.op + ", one request", Backend: k.backend, Test: tests[k], Measured: true}
		var bytes, secs float64
		for _, n := range contexts {
			req := int64(n) * perToken
			rank := int64(math.Ceil(float64(req) * share))
			us, ok := worst[k][n]
			src.Costs = append(src.Costs, KVCost{Tokens: n, RequestBytes: req, RankBytes: rank, TTFTms: us / 1000, Missing: !ok})
			if ok {
				bytes, secs = bytes+float64(rank), secs+us/1e6
			}
		}
		if secs > 0 {
			src.Bps = bytes * 8 / secs
		}
		out = append(out, src)
	}
	return out
}

// requestLatency is a perRequest result's time to move the whole request:
// nixlbench's "Avg Lat." is per descriptor (the transfer's time divided by
// the batch, utils.cpp printStats), so it is multiplied back by the batch,
// the request's descriptors.
func requestLatency(r *Result) (float64, bool) {
	for i := range r.Samples {
		s := &r.Samples[i]
		if v, ok := parsers.Figure(parsers.MetricLatency, s); ok && v > 0 {
			return v * float64(max(s.Batch, 1)), true
		}
	}
	return 0, false
}

// nixlSources: per backend, the worst pair's READ bandwidth at the sample
// size nearest block (in log scale; the larger on a tie).
func nixlSources(results []Result, block int64) []KVSource {
	by := map[string]*KVSource{}
	var order []string
	for i := range results {
		r := &results[i]
		if !tool.IsKVTransfer(r.Family) || r.Op != "READ" || r.Retest > 0 || (r.Verdict != VerdictPass && r.Verdict != VerdictFail) {
			continue
		}
		bps, at, ok := nearestSample(r, block)
		if !ok {
			continue
		}
		be := r.Backend
		if be == "" {
			be = "UCX"
		}
		cur := by[be]
		if cur == nil {
			order = append(order, be)
			by[be] = &KVSource{Source: "nixlbench READ", Backend: be, Test: r.Test, Bps: bps, AtBytes: at}
			continue
		}
		if bps < cur.Bps {
			cur.Bps, cur.AtBytes, cur.Test = bps, at, r.Test
		}
	}
	sort.Strings(order)
	var out []KVSource
	for _, be := range order {
		out = append(out, *by[be])
	}
	return out
}

func nearestSample(r *Result, block int64) (bps float64, at int64, ok bool) {
	bestD := math.Inf(1)
	for _, s := range r.Samples {
		v, has := parsers.Figure(parsers.MetricBandwidth, &s)
		if !has || v <= 0 || s.Bytes <= 0 {
			continue
		}
		d := math.Abs(math.Log2(float64(s.Bytes)) - math.Log2(float64(max(block, 1))))
		if d < bestD || (d == bestD && s.Bytes > at) {
			bestD, bps, at, ok = d, v, s.Bytes, true
		}
	}
	return bps, at, ok
}

func bestWriteBW(results []Result) (KVSource, bool) {
	var src KVSource
	for i := range results {
		r := &results[i]
		if tool.IsKVFallback(r.Tool) && r.Retest == 0 && r.BestBps > src.Bps && (r.Verdict == VerdictPass || r.Verdict == VerdictFail) {
			src = KVSource{Source: r.Tool + " (best; no nixlbench READ)", Test: r.Test, Bps: r.BestBps, AtBytes: r.BestBytes}
		}
	}
	return src, src.Bps > 0
}

// KVBudgetOf is the report's KV budget: as saved, or built from its
// serving setup and results.
func KVBudgetOf(r *Report) *KVBudget {
	if r.KVBudget != nil {
		return r.KVBudget
	}
	return BuildKVBudget(r.Serving, r.Results, r.Run.LineRate)
}

// Derive fills the report's derived views (waterfalls, KV and EP budgets,
// rail reachability) from its results; the runner calls it before saving
// report.json.
func Derive(r *Report) {
	r.Waterfalls = BuildWaterfalls(r.Results, r.Run.LineRate)
	r.KVBudget = BuildKVBudget(r.Serving, r.Results, r.Run.LineRate)
	r.EPBudget = BuildEPBudget(r.Results)
	r.RailReach = BuildRailReach(r.Results, r.Endpoints)
}

// PairKVCosts is what moving one request's KV cache over one pod pair
// costs, per context length: nixlbench's own time for one request where the
// result measured it (args.perRequest: its RequestTokens only), else computed
// from the pair's READ bandwidth at the sample size nearest the transfer
// block. TTFTms is a decode rank's share, which is what the transfer adds to
// time-to-first-token (the ranks pull at once, each over its own NIC). nil
// for a result that moved no KV, a failed one, or without a serving setup.
func PairKVCosts(s *ServingSetup, r *Result) []KVCost {
	if s == nil || s.Layers == 0 || s.DtypeBytes == 0 || !tool.IsKVTransfer(r.Family) ||
		(r.Verdict != VerdictPass && r.Verdict != VerdictFail) {
		return nil
	}
	perToken, share, block := kvShape(s)
	if perToken <= 0 || share <= 0 || math.IsInf(share, 0) {
		return nil
	}
	cost := func(n int, ms float64) KVCost {
		req := int64(n) * perToken
		return KVCost{Tokens: n, RequestBytes: req, RankBytes: int64(math.Ceil(float64(req) * share)), TTFTms: ms}
	}
	if r.RequestTokens > 0 && (r.Op == "READ" || r.Op == "WRITE") {
		if us, ok := requestLatency(r); ok {
			return []KVCost{cost(r.RequestTokens, us/1000)}
		}
		return nil
	}
	bps, _, ok := nearestSample(r, block)
	if r.Op != "READ" || !ok {
		return nil
	}
	var out []KVCost
	for _, n := range s.ContextLengths {
		c := cost(n, 0)
		c.TTFTms = float64(c.RankBytes) * 8 / bps * 1000
		out = append(out, c)
	}
	return out
}
