package report

import (
	"fmt"
	"sort"
)

// maxLatencyCharts bounds the latency charts; more latency results are in
// the verdict table.
const maxLatencyCharts = 6

// testGroups returns results by test, in the order tests first appear.
func testGroups(rs []Result) ([]string, map[string][]*Result) {
	var order []string
	by := map[string][]*Result{}
	for i := range rs {
		r := &rs[i]
		if len(r.Samples) == 0 {
			continue
		}
		if by[r.Test] == nil {
			order = append(order, r.Test)
		}
		by[r.Test] = append(by[r.Test], r)
	}
	return order, by
}

// buildSections lays the charts out by what a reader asks in turn: how far
// from line rate is each pair, how does bandwidth grow with size, which
// links are slow, which NIXL backend wins, what are the latencies, what does
// NCCL get.
func buildSections(r *Report) []section {
	order, by := testGroups(r.Results)
	nodes := map[string]string{}
	for _, e := range r.Endpoints {
		nodes[e.Name] = e.Node
	}
	eff := section{ID: "efficiency", Title: "Percent of line rate per pair"}
	bw := section{ID: "bandwidth", Title: "Bandwidth versus message size", Intro: "Average bandwidth per message size; the dashed line is the line rate."}
	mat := section{ID: "matrix", Title: "All-to-all matrices", Intro: "Rows send, columns receive. A red cell is a slow link; a red row or column is a slow node or NIC."}
	nixl := section{ID: "nixl", Title: "NIXL backend comparison", Intro: "nixlbench bandwidth per block size, one line per backend."}
	lat := section{ID: "latency", Title: "Latency percentiles"}
	nccl := section{ID: "nccl", Title: "NCCL bus bandwidth", Intro: "Bus bandwidth (GB/s, as nccl-tests reports it) versus message size; solid out-of-place, dashed in-place."}
	var effResults []*Result
	nixlGroups := map[string][]*Result{}
	var nixlOrder []string
	for _, test := range order {
		rs := by[test]
		tool := rs[0].Tool
		switch {
		case IsCollective(tool):
			nccl.Charts = append(nccl.Charts, ncclChart(test, rs))
		case tool == "nixlbench":
			for _, x := range rs {
				k := x.Test + " " + x.Op
				if nixlGroups[k] == nil {
					nixlOrder = append(nixlOrder, k)
				}
				nixlGroups[k] = append(nixlGroups[k], x)
			}
		case MetricOf(rs[0]) == "lat_avg_us":
			for _, x := range rs {
				if len(lat.Charts) < maxLatencyCharts {
					lat.Charts = append(lat.Charts, latencyChart(x))
				}
			}
			continue
		case isMatrix(rs):
			mat.Charts = append(mat.Charts, heatmapChart(test, rs))
			mat.Tables = append(mat.Tables, slowTable(test, rs, nodes))
			bw.Charts = append(bw.Charts, bandwidthChart(test, rs))
			continue // the heatmap shows their efficiency
		default:
			bw.Charts = append(bw.Charts, bandwidthChart(test, rs))
		}
		for _, x := range rs {
			if x.Efficiency != nil {
				effResults = append(effResults, x)
			}
		}
	}
	for _, k := range nixlOrder {
		nixl.Charts = append(nixl.Charts, nixlChart(k+" — bandwidth per block size and backend", nixlGroups[k]))
		nixl.Tables = append(nixl.Tables, nixlTable(k, nixlGroups[k]))
	}
	if len(effResults) > 0 {
		sort.SliceStable(effResults, func(i, j int) bool { return efficiencyKey(effResults[i]) < efficiencyKey(effResults[j]) })
		if len(effResults) > maxEfficiencyBars {
			eff.Intro = fmt.Sprintf("The %d worst of %d results.", maxEfficiencyBars, len(effResults))
			effResults = effResults[:maxEfficiencyBars]
		}
		eff.Charts = append(eff.Charts, efficiencyChart(effResults))
	}
	var out []section
	for _, s := range []section{eff, mat, bw, nixl, lat, nccl} {
		if len(s.Charts) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func slowTable(test string, rs []*Result, nodes map[string]string) htmlTable {
	t := htmlTable{Caption: test + ": endpoints with the lowest mean % of line rate",
		Head: []string{"endpoint", "node", "as sender", "as receiver", "worst partner"}}
	for _, s := range slowEndpoints(rs, nodes, 5) {
		t.Rows = append(t.Rows, []string{s.Name, s.Node, fmt.Sprintf("%.1f%%", s.Send), fmt.Sprintf("%.1f%%", s.Recv),
			fmt.Sprintf("%s (%.1f%%)", s.WorstPartner, s.WorstPartnerEf)})
	}
	return t
}

// nixlTable ranks the backends by best bandwidth.
func nixlTable(title string, rs []*Result) htmlTable {
	sorted := append([]*Result(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].BestBps > sorted[j].BestBps })
	t := htmlTable{Caption: title + ": backends ranked by best bandwidth", Head: []string{"rank", "backend", "best", "% of line rate", "verdict"}}
	for i, r := range sorted {
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), r.Backend, r.Headline(), FormatEfficiency(r.Efficiency), r.Verdict})
	}
	return t
}
