package html

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// maxLatencyCharts bounds the latency charts; more latency results are in
// the verdict table.
const maxLatencyCharts = 6

// testGroups returns results by test, in the order tests first appear.
//
// dead holds, by test, the legs that ended in error with nothing measured:
// not a curve, but a matrix's reddest cell (deadCells).
func testGroups(rs []schema.Result) (order []string, by, dead map[string][]*schema.Result) {
	by, dead = map[string][]*schema.Result{}, map[string][]*schema.Result{}
	for i := range rs {
		r := &rs[i]
		if len(r.Samples) == 0 {
			if r.Verdict == schema.VerdictError && r.Retest == 0 {
				dead[r.Test] = append(dead[r.Test], r)
			}
			continue
		}
		if by[r.Test] == nil {
			order = append(order, r.Test)
		}
		by[r.Test] = append(by[r.Test], r)
	}
	return order, by, dead
}

// deadCells are the dead legs of a matrix whose pair has no measured leg
// in rs (a pair measured at some sizes keeps its cell), one per pair: a
// dead link is a 0 % cell, told apart from a pair a sample did not run.
func deadCells(rs, dead []*schema.Result) []*schema.Result {
	type key struct{ pair, backend, op string }
	have := map[key]bool{}
	for _, r := range rs {
		have[key{r.Pair(), r.Backend, r.Op}] = true
	}
	var out []*schema.Result
	for _, r := range dead {
		if k := (key{r.Pair(), r.Backend, r.Op}); !have[k] {
			have[k] = true
			out = append(out, r)
		}
	}
	return out
}

// buildSections lays the charts out by what a reader asks in turn: how far
// from line rate is each pair, how does bandwidth grow with size, which
// links are slow, which NIXL backend wins, what are the latencies, what does
// NCCL get.
func buildSections(r *schema.Report) []section {
	order, by, dead := testGroups(r.Results)
	nodes := map[string]string{}
	for _, e := range r.Endpoints {
		nodes[e.Name] = e.Node
	}
	eff := section{ID: "efficiency", Title: "Percent of line rate per pair"}
	bw := section{ID: "bandwidth", Title: "Bandwidth versus message size", Intro: "Average bandwidth per message size; the dashed line is the line rate, where the run knows it."}
	mat := section{ID: "matrix", Title: "All-to-all matrices", Intro: "Rows send, columns receive. A red cell is a slow link; a red row or column is a slow node or NIC."}
	nixl := section{ID: "nixl", Title: "NIXL backend comparison", Intro: "nixlbench bandwidth per block size, one line per backend."}
	lat := section{ID: "latency", Title: "Latency percentiles"}
	nccl := section{ID: "nccl", Title: "NCCL bus bandwidth", Intro: "Bus bandwidth (GB/s, as nccl-tests reports it) versus message size; solid out-of-place, dashed in-place."}
	var effResults []*schema.Result
	nixlGroups := map[string][]*schema.Result{}
	var nixlOrder []string
	for _, test := range order {
		legs := by[test]
		rs := mergeVariants(legs)
		switch family := rs[0].Family; {
		case family == tool.FamilyDeepEP:
			// Its samples are per rank and phase, not a curve over sizes:
			// the EP budget's section shows them (insightSections).
		case tool.IsCollective(family):
			nccl.Charts = append(nccl.Charts, ncclChart(test, rs))
		case tool.IsKVTransfer(family):
			// Backends are compared across tests: a scenario names one
			// test per backend, and what must match is the workload.
			for _, x := range rs {
				k := nixlWorkload(x)
				if nixlGroups[k] == nil {
					nixlOrder = append(nixlOrder, k)
				}
				nixlGroups[k] = append(nixlGroups[k], x)
			}
		case rs[0].Metric == parsers.MetricLatency:
			for _, x := range rs {
				if len(lat.Charts) < maxLatencyCharts {
					lat.Charts = append(lat.Charts, latencyChart(x))
				}
			}
			continue
		case isMatrix(rs):
			withDead := append(slices.Clip(rs), deadCells(rs, dead[test])...)
			cells, of := matrixCells(withDead)
			heat := heatmapChart(test, withDead, cells, of)
			mat.Charts = append(mat.Charts, heat)
			if heat.pairChartFollows {
				mat.Charts = append(mat.Charts, pairCurveChart(test, cells))
			}
			mat.Tables = append(mat.Tables, slowTable(test, cells, of, nodes))
			if sizes, _ := sizeAxis(rs); len(sizes) > 1 {
				bw.Charts = append(bw.Charts, bandwidthChart(test, rs))
			}
			continue // the heatmap shows their efficiency
		default:
			if sizes, _ := sizeAxis(rs); len(sizes) > 1 { // one size is a figure, not a curve
				bw.Charts = append(bw.Charts, bandwidthChart(test, rs))
			}
		}
		for _, x := range legs {
			if x.Efficiency != nil {
				effResults = append(effResults, x)
			}
		}
	}
	notRun := nixlNotRun(r.Results)
	for _, k := range nixlOrder {
		if sizes, _ := sizeAxis(nixlGroups[k]); len(sizes) > 1 {
			nixl.Charts = append(nixl.Charts, nixlChart(k+" — bandwidth per block size and backend", nixlGroups[k]))
		}
		nixl.Tables = append(nixl.Tables, nixlTable(k, nixlGroups[k], notRun[k]))
		delete(notRun, k)
	}
	for _, k := range slices.Sorted(maps.Keys(notRun)) { // no backend of this workload measured anything
		nixl.Tables = append(nixl.Tables, nixlTable(k, nil, notRun[k]))
	}
	if len(r.Samples) > 0 {
		mat.Tables = append(mat.Tables, samplesTable(r.Samples))
	}
	fillEfficiency(&eff, effResults)
	var out []section
	for _, s := range []section{eff, mat, bw, nixl, lat, nccl} {
		if len(s.Charts) > 0 {
			out = append(out, s)
		}
	}
	return append(out, insightSections(r)...)
}

func slowTable(test string, cells []matrixCell, of string, nodes map[string]string) htmlTable {
	t := htmlTable{Caption: test + ": endpoints with the lowest mean % of " + of,
		Head: []string{"endpoint", "node", "as sender", "as receiver", "worst partner"}}
	for _, s := range slowEndpoints(cells, nodes, 5) {
		t.Rows = append(t.Rows, []string{s.Name, s.Node, fmt.Sprintf("%.1f%%", s.Send), fmt.Sprintf("%.1f%%", s.Recv),
			fmt.Sprintf("%s (%.1f%%)", s.WorstPartner, s.WorstPartnerEf)})
	}
	return t
}

// nixlTable ranks the backends that measured by best bandwidth, then lists
// those that did not, with why (a backend the build lacks is "not run here",
// not a missing row).
func nixlTable(title string, rs, notRun []*schema.Result) htmlTable {
	sorted := append([]*schema.Result(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].BestBps > sorted[j].BestBps })
	t := htmlTable{Caption: title + ": backends ranked by best bandwidth", Head: []string{"rank", "backend", "test", "best", "% of line rate", "verdict"}}
	for i, r := range sorted {
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), r.Backend, r.Test, r.Headline(), schema.FormatEfficiency(r.Efficiency), r.Verdict})
	}
	for _, r := range notRun {
		why := r.Verdict
		if r.Reason != "" {
			why += ": " + r.Reason
		}
		best := "no result" // it ran and failed (error): not the same as never run
		if r.Verdict == schema.VerdictSkipped {
			best = "not run here"
		}
		t.Rows = append(t.Rows, []string{"-", r.Backend, r.Test, best, "-", why})
	}
	return t
}

// nixlSegRe reads the memory each side of a nixlbench command used.
var nixlSegRe = regexp.MustCompile(`--(initiator|target)_seg_type[ =]([A-Z]+)`)

// nixlWorkload is what nixlbench results must share to be compared as
// backends: the pair, the operation, each side's memory and, for KV
// requests, their length.
func nixlWorkload(r *schema.Result) string {
	k := r.Pair() + " " + r.Op
	seg := map[string]string{"initiator": "DRAM", "target": "DRAM"} // nixlbench's defaults
	if len(r.Commands) > 0 {
		for _, m := range nixlSegRe.FindAllStringSubmatch(r.Commands[0], -1) {
			seg[m[1]] = m[2]
		}
	}
	k += " " + seg["initiator"] + "←" + seg["target"]
	if r.RequestTokens > 0 {
		k += fmt.Sprintf(", %d-token request", r.RequestTokens)
	}
	return k
}

// nixlNotRun groups the nixlbench results that measured nothing (skipped,
// error) by workload, for the comparison tables.
func nixlNotRun(rs []schema.Result) map[string][]*schema.Result {
	out := map[string][]*schema.Result{}
	for i := range rs {
		r := &rs[i]
		if tool.IsKVTransfer(r.Family) && len(r.Samples) == 0 {
			k := nixlWorkload(r)
			out[k] = append(out[k], r)
		}
	}
	return out
}

// mergeVariants joins the legs of one pair that differ only by variant (a
// runner that runs one leg per message size) into one result per pair, so
// that a chart draws one line through every size rather than one point per leg.
func mergeVariants(rs []*schema.Result) []*schema.Result {
	type key struct{ pair, backend, op string }
	groups := map[key][]*schema.Result{}
	var order []key
	for _, r := range rs {
		if r.Retest > 0 {
			continue // a low pair's rerun: the matrix shows what the matrix measured (the low-pairs section, the reruns)
		}
		k := key{r.Pair(), r.Backend, r.Op}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	if len(order) == len(rs) {
		return rs
	}
	out := make([]*schema.Result, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if len(g) == 1 {
			out = append(out, g[0])
			continue
		}
		m := *g[0]
		m.Samples, m.Stats, m.Variant = nil, nil, ""
		for _, r := range g {
			m.Samples = append(m.Samples, r.Samples...)
			m.Stats = append(m.Stats, r.Stats...) // one leg per size: each its own sizes' spread
			if r.BestBps > m.BestBps {
				m.BestBps, m.BestBytes, m.Efficiency = r.BestBps, r.BestBytes, r.Efficiency
			}
			if schema.VerdictRank(r.Verdict) < schema.VerdictRank(m.Verdict) {
				m.Verdict = r.Verdict
			}
		}
		sort.SliceStable(m.Samples, func(i, j int) bool { return m.Samples[i].Bytes < m.Samples[j].Bytes })
		sort.SliceStable(m.Stats, func(i, j int) bool { return m.Stats[i].Bytes < m.Stats[j].Bytes })
		out = append(out, &m)
	}
	return out
}

// fillEfficiency adds the per-pair efficiency chart, bounded to the worst
// maxEfficiencyBars results.
func fillEfficiency(eff *section, rs []*schema.Result) {
	if len(rs) == 0 {
		return
	}
	sort.SliceStable(rs, func(i, j int) bool { return schema.EfficiencyKey(rs[i]) < schema.EfficiencyKey(rs[j]) })
	if len(rs) > maxEfficiencyBars {
		eff.Intro = fmt.Sprintf("The %d worst of %d results.", maxEfficiencyBars, len(rs))
		rs = rs[:maxEfficiencyBars]
	}
	eff.Charts = append(eff.Charts, efficiencyChart(rs))
}
