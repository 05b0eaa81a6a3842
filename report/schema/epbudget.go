package schema

import (
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/tool"
)

// EP budget stages: which of vLLM's two DeepEP backends a kernel set
// stands for, and so what its time is added to.
const (
	// EPStageDecode: the low-latency kernels (deepep_low_latency), once per
	// MoE layer of every decode step: time per output token (TPOT).
	EPStageDecode = "decode"
	// EPStagePrefill: the normal kernels (deepep_high_throughput), once per
	// MoE layer of a prefill forward pass: time to first token (TTFT).
	EPStagePrefill = "prefill"
)

// EPBudget is what the expert-parallel all-to-all adds to serving on this
// fabric: per DeepEP probe result and kernel set, one MoE layer's dispatch
// plus combine, each at its slowest rank, times the model's MoE layers.
type EPBudget struct {
	Rows []EPCost `json:"rows"`
}

// EPCost is one kernel set of one DeepEP result.
type EPCost struct {
	Test string `json:"test"`
	// Ranks is the collective's rank count.
	Ranks int `json:"ranks"`
	// Kernels is "low_latency" or "normal"; Stage what they serve
	// (EPStageDecode or EPStagePrefill).
	Kernels string `json:"kernels"`
	Stage   string `json:"stage"`
	// Tokens is the tokens per rank of one call (the decode or prefill batch).
	Tokens   int64   `json:"tokens"`
	Dispatch EPPhase `json:"dispatch"`
	Combine  EPPhase `json:"combine"`
	// Pair is the two timed back to back in one window (the low-latency
	// kernels: a decode step launches combine right after dispatch), at its
	// slowest rank; nil where the probe did not time it so.
	Pair      *EPPhase `json:"pair,omitempty"`
	MoELayers int      `json:"moeLayers"`
	// LayerUS is one MoE layer's all-to-all: the pair's time where it was
	// timed back to back (the gap between the kernels counts), else
	// dispatch + combine, each at its slowest rank (a step waits for its
	// slowest rank in each phase).
	LayerUS float64 `json:"layerUs"`
	// Ms is LayerUS × MoELayers: what the all-to-all adds to every output
	// token (decode: TPOT) or to a prefill forward pass of Tokens per rank
	// (prefill: TTFT).
	Ms float64 `json:"ms"`
}

// EPPhase is one phase (dispatch or combine) at its slowest rank.
type EPPhase struct {
	// Phase is the probe's name for it: "low_latency dispatch (FP8)".
	Phase string `json:"phase"`
	// Rank is the slowest rank (highest average time per call); AvgUS its
	// average, Bytes and Bps what it moved and at what rate.
	Rank  int     `json:"rank"`
	AvgUS float64 `json:"avgUs"`
	Bytes int64   `json:"bytes"`
	Bps   float64 `json:"bps,omitempty"`
	// MeanUS is the average over the RanksSeen ranks that reported it.
	MeanUS    float64 `json:"meanUs"`
	RanksSeen int     `json:"ranksSeen"`
}

// BuildEPBudget costs every DeepEP probe result that measured both phases
// of a kernel set (pass or fail, not a retest); nil when none did. Pure.
func BuildEPBudget(results []Result) *EPBudget {
	var b EPBudget
	for i := range results {
		r := &results[i]
		if r.Family != tool.FamilyDeepEP || r.Retest > 0 || (r.Verdict != VerdictPass && r.Verdict != VerdictFail) {
			continue
		}
		b.Rows = append(b.Rows, resultEPCosts(r)...)
	}
	if len(b.Rows) == 0 {
		return nil
	}
	return &b
}

// EPBudgetOf is the report's EP budget: as saved, or built from its results.
func EPBudgetOf(r *Report) *EPBudget {
	if r.EPBudget != nil {
		return r.EPBudget
	}
	return BuildEPBudget(r.Results)
}

// resultEPCosts: the result's kernel sets, low latency (decode) first.
func resultEPCosts(r *Result) []EPCost {
	phases, tokens := slowestRanks(r.Samples)
	var out []EPCost
	for _, k := range []struct{ kernels, stage string }{{"low_latency", EPStageDecode}, {"normal", EPStagePrefill}} {
		d, okD := phases[k.kernels+" dispatch"]
		c, okC := phases[k.kernels+" combine"]
		if !okD || !okC {
			continue
		}
		layers := r.MoELayers
		if layers <= 0 {
			layers = tool.DefaultDeepEPMoELayers
		}
		layer := d.AvgUS + c.AvgUS
		var pair *EPPhase
		if p, ok := phases[k.kernels+" dispatch+combine"]; ok {
			pair, layer = &p, p.AvgUS
		}
		out = append(out, EPCost{Test: r.Test, Ranks: max(r.NRanks, d.RanksSeen), Kernels: k.kernels, Stage: k.stage,
			Tokens: tokens[k.kernels], Dispatch: d, Combine: c, Pair: pair, MoELayers: layers, LayerUS: layer,
			Ms: layer * float64(layers) / 1000})
	}
	return out
}

// slowestRanks: per "kernels op" (the phase without its data type), the
// slowest rank's figures and the mean over ranks; per kernel set, the
// tokens per rank (the samples' batch).
func slowestRanks(samples []parsers.Sample) (map[string]EPPhase, map[string]int64) {
	phases, tokens := map[string]EPPhase{}, map[string]int64{}
	sums := map[string]float64{}
	for i := range samples {
		s := &samples[i]
		f := strings.Fields(s.Phase)
		us, ok := parsers.Figure(parsers.MetricLatency, s)
		if len(f) < 2 || s.Rank == nil || !ok || us <= 0 {
			continue
		}
		key := f[0] + " " + f[1]
		tokens[f[0]] = max(tokens[f[0]], s.Batch)
		p, seen := phases[key]
		sums[key] += us
		p.RanksSeen++
		if !seen || us > p.AvgUS || (us == p.AvgUS && *s.Rank < p.Rank) {
			p.Phase, p.Rank, p.AvgUS, p.Bytes = s.Phase, *s.Rank, us, s.Bytes
			p.Bps, _ = parsers.Figure(parsers.MetricBandwidth, s)
		}
		phases[key] = p
	}
	for k, p := range phases {
		p.MeanUS = sums[k] / float64(p.RanksSeen)
		phases[k] = p
	}
	return phases, tokens
}

// EPStageWord is how a stage's cost reads: "per output token (TPOT)" or
// "per prefill pass (TTFT)".
func EPStageWord(stage string) string {
	if stage == EPStagePrefill {
		return "per prefill pass (TTFT)"
	}
	return "per output token (TPOT)"
}
