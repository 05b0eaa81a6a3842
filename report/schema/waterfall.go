package schema

import (
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

// Waterfall is one pair's path measured layer by layer, from raw RDMA on
// host memory up to NCCL: where bandwidth is lost between the NIC and the
// collective library.
type Waterfall struct {
	// Pair is "a ↔ b": the two endpoints, in name order.
	Pair      string   `json:"pair"`
	Endpoints []string `json:"endpoints"`
	// LineRateBps is the run's line rate, else (none set) the one the
	// pair's results were judged against: a one-host GPU pair's NVLink.
	LineRateBps float64          `json:"lineRateBps,omitempty"`
	Layers      []WaterfallLayer `json:"layers"`
}

// WaterfallLayer is the best bandwidth one layer reached on the pair.
type WaterfallLayer struct {
	// Layer names it: "ib_write_bw host", "ib_write_bw GPU", "GPU copy",
	// "ucx_perftest", "nixlbench UCX", "nccl sendrecv".
	Layer string `json:"layer"`
	// Level orders the layers (1 host RDMA, 2 GPU RDMA or, on one host, GPU copy … 5 NCCL:
	// tool.Level*); NIXL backends share one.
	Level     int     `json:"level"`
	Test      string  `json:"test"`
	BestBps   float64 `json:"bestBps"`
	BestBytes int64   `json:"bestBytes,omitempty"`
	// PctLineRate is BestBps as a percent of the line rate.
	PctLineRate *float64 `json:"pctLineRate,omitempty"`
	// Below is the layer this one is compared with (the best of the nearest
	// lower level), PctOfBelow the percent of its bandwidth kept.
	Below      string   `json:"below,omitempty"`
	PctOfBelow *float64 `json:"pctOfBelow,omitempty"`
}

// waterfallLayer says which layer a result measures (the tool's
// description decides); ok false for results that are no layer (latency
// tools, other collectives, failed legs).
func waterfallLayer(r *Result) (name string, level int, ok bool) {
	if r.BestBps <= 0 || (r.Verdict != VerdictPass && r.Verdict != VerdictFail) || r.Retest > 0 {
		return "", 0, false
	}
	return tool.WaterfallLayer(tool.LayerOf{Program: r.Tool, Family: r.Family, Op: r.Op, Backend: r.Backend, Commands: r.Commands})
}

// resultPair is the two endpoints of a result, in name order; NCCL ranks
// ("ep-0/gpu3") count by endpoint. ok false unless exactly two.
func resultPair(r *Result) ([2]string, bool) {
	set := map[string]bool{}
	if r.From != "" && r.To != "" {
		set[r.From], set[r.To] = true, true
	}
	for _, rk := range r.Ranks {
		ep, _, _ := strings.Cut(rk, "/")
		set[ep] = true
	}
	if len(set) != 2 {
		return [2]string{}, false
	}
	var p []string
	for k := range set {
		p = append(p, k)
	}
	sort.Strings(p)
	return [2]string{p[0], p[1]}, true
}

// BuildWaterfalls builds one waterfall per pair from whatever layers the
// results measured on it (the best bandwidth of each layer over directions
// and sizes); a pair with fewer than two layers has none. Percents of the
// line rate are of lineRate, else (none set) of the rate the pair's results
// were judged against. Pure.
func BuildWaterfalls(results []Result, lineRate *LineRate) []Waterfall {
	// Layers by pair, then the best result per layer: one pass, so a
	// 65,280-pair matrix costs what it holds (a pair-by-pair scan of every
	// layer was quadratic: 35 s at 256 endpoints).
	byPair := map[[2]string]map[string]WaterfallLayer{}
	judged := map[[2]string]float64{} // the lowest rate the pair's layers were judged against
	for i := range results {
		r := &results[i]
		name, level, ok := waterfallLayer(r)
		if !ok {
			continue
		}
		p, ok := resultPair(r)
		if !ok {
			continue
		}
		best := byPair[p]
		if best == nil {
			best = map[string]WaterfallLayer{}
			byPair[p] = best
		}
		if cur, seen := best[name]; !seen || r.BestBps > cur.BestBps {
			best[name] = WaterfallLayer{Layer: name, Level: level, Test: r.Test, BestBps: r.BestBps, BestBytes: r.BestBytes}
		}
		judged[p] = lowerRate(judged[p], r.LineRate)
	}
	var out []Waterfall
	for p, best := range byPair {
		if len(best) < 2 {
			continue
		}
		lr := pairLineRate(lineRate, judged[p])
		layers := make([]WaterfallLayer, 0, len(best))
		for _, l := range best {
			layers = append(layers, l)
		}
		sort.Slice(layers, func(i, j int) bool {
			if layers[i].Level != layers[j].Level {
				return layers[i].Level < layers[j].Level
			}
			return layers[i].Layer < layers[j].Layer
		})
		compareLayers(layers, lr)
		out = append(out, Waterfall{Pair: p[0] + " ↔ " + p[1], Endpoints: []string{p[0], p[1]}, LineRateBps: lr, Layers: layers})
	}
	sort.Slice(out, func(i, j int) bool { return NaturalLess(out[i].Pair, out[j].Pair) })
	return out
}

// lowerRate is the lower of a rate so far (0: none yet) and a result's
// line rate, where it has one.
func lowerRate(sofar float64, lr *LineRate) float64 {
	if lr == nil || lr.Bps <= 0 || (sofar > 0 && sofar <= lr.Bps) {
		return sofar
	}
	return lr.Bps
}

// pairLineRate is the rate a pair's waterfall is drawn against: the run's,
// or where the scenario set none, the one its results were judged against
// (a GPU pair on one host: its NVLink, which the runner read for them), so
// that the layers' "% LINE" matches their results'.
func pairLineRate(run *LineRate, judged float64) float64 {
	if run != nil && run.Bps > 0 {
		return run.Bps
	}
	return judged
}

// compareLayers fills the percents: of the line rate, and of the best
// layer of the nearest lower level.
func compareLayers(layers []WaterfallLayer, lineRate float64) {
	var below *WaterfallLayer // best of the previous level
	var levelBest *WaterfallLayer
	level := 0
	for i := range layers {
		l := &layers[i]
		if l.Level != level {
			if levelBest != nil {
				below = levelBest
			}
			level, levelBest = l.Level, nil
		}
		if lineRate > 0 {
			l.PctLineRate = pct(l.BestBps, lineRate)
		}
		if below != nil && below.BestBps > 0 {
			l.Below, l.PctOfBelow = below.Layer, pct(l.BestBps, below.BestBps)
		}
		if levelBest == nil || l.BestBps > levelBest.BestBps {
			levelBest = l
		}
	}
}

func pct(v, of float64) *float64 {
	p := 100 * v / of
	return &p
}

// WaterfallsOf is the report's waterfalls: as saved, or built from its
// results for a report.json written before they existed.
func WaterfallsOf(r *Report) []Waterfall {
	if r.Waterfalls != nil {
		return r.Waterfalls
	}
	return BuildWaterfalls(r.Results, r.Run.LineRate)
}
