package html

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/tool"
)

// minMatrixEndpoints is the endpoint count from which a pairwise test is
// drawn as an N×N heatmap: below it, the per-pair bars say the same.
const minMatrixEndpoints = 3

// isMatrix reports whether a test's results form a sender × receiver matrix.
func isMatrix(rs []*schema.Result) bool {
	eps := map[string]bool{}
	for _, r := range rs {
		if r.From == "" || r.To == "" {
			return false
		}
		eps[r.From], eps[r.To] = true, true
	}
	return len(eps) >= minMatrixEndpoints && len(rs) >= len(eps)
}

// matrixEndpoints lists a matrix's endpoints in natural order.
func matrixEndpoints(rs []*schema.Result) []string {
	seen := map[string]bool{}
	var eps []string
	for _, r := range rs {
		for _, e := range []string{r.From, r.To} {
			if !seen[e] {
				seen[e] = true
				eps = append(eps, e)
			}
		}
	}
	sort.Slice(eps, func(i, j int) bool { return schema.NaturalLess(eps[i], eps[j]) })
	return eps
}

// matrixCell is one pair of a matrix as its heatmap draws it.
type matrixCell struct {
	r *schema.Result
	// pct is the pair's best bandwidth as a percent of the matrix's
	// reference (matrixCells' `of`).
	pct float64
}

// sender and receiver are the ends the data leaves and reaches: the
// client sends, except where it reads the server's memory (ib_read_*,
// nixlbench READ), and then the data flows server → client.
func (c matrixCell) sender() string {
	if readsPeer(c.r) {
		return c.r.To
	}
	return c.r.From
}

func (c matrixCell) receiver() string {
	if readsPeer(c.r) {
		return c.r.From
	}
	return c.r.To
}

func readsPeer(r *schema.Result) bool {
	return tool.ProgramOp(r.Tool) == "READ" || strings.EqualFold(r.Op, "READ")
}

const (
	ofLineRate = "line rate"
	ofBestPair = "the best pair"
)

// matrixCells are the pairs a heatmap draws, as percents of line rate where
// every measured pair has one, else of the matrix's best pair (a run with
// no line rate: `lineRate: auto` where no NIC says one). A pair whose leg
// failed or measured nothing is 0 %: a dead link is the reddest cell, not
// a blank one. Skipped and invalid pairs, and non-finite figures, have no
// cell.
func matrixCells(rs []*schema.Result) ([]matrixCell, string) {
	var measured []*schema.Result
	of, best := ofLineRate, 0.0
	for _, r := range rs {
		if r.Verdict == schema.VerdictSkipped || r.Verdict == schema.VerdictInvalid || !finite(r.BestBps) {
			continue
		}
		if r.Efficiency != nil && !finite(*r.Efficiency) {
			continue
		}
		measured = append(measured, r)
		best = max(best, r.BestBps)
		if r.Efficiency == nil && r.BestBps > 0 {
			of = ofBestPair
		}
	}
	cells := make([]matrixCell, 0, len(measured))
	for _, r := range measured {
		c := matrixCell{r: r}
		switch {
		case of == ofBestPair && best > 0:
			c.pct = 100 * r.BestBps / best
		case r.Efficiency != nil:
			c.pct = *r.Efficiency
		}
		cells = append(cells, c)
	}
	return cells, of
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func cellResults(cells []matrixCell) []*schema.Result {
	out := make([]*schema.Result, len(cells))
	for i, c := range cells {
		out[i] = c.r
	}
	return out
}

// heatmapChart is the N×N matrix of matrixCells: rows send, columns
// receive. A slow link is one red cell; a slow node is a red row or
// column. Each cell holds only numbers ([receiver, sender, %, bandwidth]);
// the names and the tooltip come from the matrix payload once, so that a
// 65,280-pair matrix costs bytes per cell, not a sentence. With more than
// one size, every pair's curve rides along packed, drawn on a click.
func heatmapChart(test string, rs []*schema.Result, cells []matrixCell, of string) chartSpec {
	eps := matrixEndpoints(rs)
	idx := map[string]int{}
	for i, e := range eps {
		idx[e] = i
	}
	div, unit := unitFor(rs[0].Family)
	lo := 100.0
	data := make([]opts.HeatMapData, 0, len(cells))
	for _, c := range cells {
		lo = min(lo, c.pct)
		data = append(data, opts.HeatMapData{Value: []any{idx[c.receiver()], idx[c.sender()], round1(c.pct), round1(c.r.BestBps / div)}})
	}
	c := charts.NewHeatMap()
	showLabels := len(eps) <= 16
	axisFont := 12
	if !showLabels {
		axisFont = 9
	}
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "2%", Right: "90", Top: "30", Bottom: "8", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: eps, Name: "receiver", Position: "top",
			AxisLabel: &opts.AxisLabel{Rotate: 60, Interval: "0", FontSize: axisFont}, SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: eps, Name: "sender", Inverse: opts.Bool(true),
			AxisLabel: &opts.AxisLabel{Interval: "0", FontSize: axisFont}, SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithVisualMapOpts(opts.VisualMap{Calculable: opts.Bool(true), Min: float32(min(lo, 80)), Max: 100,
			Orient: "vertical", Right: "0", Top: "middle", Text: []string{"100%", fmt.Sprintf("%.0f%%", min(lo, 80))},
			InRange: &opts.VisualMapInRange{Color: []string{"#b71c1c", "#ef6c00", "#fdd835", "#9ccc65", "#2e7d32"}}}),
	)
	border := 1
	if len(eps) > 64 {
		border = 0 // a 1-pixel white border would be most of a 4-pixel cell
	}
	c.AddSeries("% of "+of, data, charts.WithLabelOpts(opts.Label{Show: opts.Bool(showLabels), Formatter: string(jsFunc("function (p) { return p.value[2].toFixed(0); }"))}),
		charts.WithItemStyleOpts(opts.ItemStyle{BorderColor: "#fff", BorderWidth: float32(border)}))
	height := 160 + 13*len(eps)
	if showLabels {
		height = 160 + 32*len(eps)
	}
	spec := chartSpec{Title: test + " — % of " + of + ", sender × receiver", Height: min(max(height, 360), 1100),
		Note:   fmt.Sprintf("%d endpoints, %d pairs; each cell is the best bandwidth of the pair as a percent of %s.", len(eps), len(data), of),
		Option: patchOption(unprogressive(string(c.JSONNotEscaped())), heatmapPatch(len(eps)))}
	if of == ofBestPair {
		spec.Note += " The run knew no line rate, so the best pair is 100%."
	}
	payload := matrixPayload{Endpoints: eps, Unit: unit, Of: of}
	results := cellResults(cells)
	if sizes, labels := sizeAxis(results); len(sizes) > 1 {
		payload.Sizes = labels
		payload.Scale, payload.Curves = packCurves(results, sizes, pickMetric(rs[0].Metric), div)
		spec.Note += " Click a cell to draw its pair's bandwidth per message size below."
		spec.pairChartFollows = true
	}
	b, err := json.Marshal(payload)
	if err != nil { // strings and finite numbers only (matrixCells, packCurves): a bug
		b = []byte("null")
	}
	spec.Matrix = scriptSafe(string(b))
	return spec
}

// scriptSafe keeps JSON from ending or confusing the script element it is
// written into: "</" would close it, "<!--" and "<script" (in any case)
// switch the HTML parser's script states. Each only ever occurs inside a
// JSON string, where \u003c is the same "<".
func scriptSafe(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		rest := s[i:]
		if s[i] == '<' && (strings.HasPrefix(rest, "</") || strings.HasPrefix(rest, "<!--") ||
			len(rest) >= 7 && strings.EqualFold(rest[:7], "<script")) {
			b.WriteString(`\u003c`)
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// heatmapPatch says what go-echarts' types cannot: colour by the cells'
// third value (% of line rate; ECharts' default is the last, here the
// bandwidth), and, beyond 64 endpoints, name every k-th so that the names
// stay legible (the tooltip names every cell). Both are numbers to
// ECharts, strings to go-echarts.
func heatmapPatch(endpoints int) func(map[string]any) {
	every := (endpoints - 1) / 64 // labels skipped between two shown
	return func(m map[string]any) {
		for _, key := range []string{"visualMap", "xAxis", "yAxis"} {
			items, ok := m[key].([]any)
			if !ok {
				items = []any{m[key]}
			}
			for _, it := range items {
				it, ok := it.(map[string]any)
				if !ok {
					continue
				}
				if key == "visualMap" {
					it["dimension"] = 2
				} else if label, ok := it["axisLabel"].(map[string]any); ok {
					label["interval"] = every
				}
			}
		}
	}
}

// slowEndpoints ranks a matrix's endpoints by their mean efficiency as
// sender and as receiver: a node whose row and column are both low has the
// problem, not the links.
type endpointScore struct {
	Name           string
	Node           string
	Send, Recv     float64
	SendN, RecvN   int
	WorstPartner   string
	WorstPartnerEf float64
}

func slowEndpoints(cells []matrixCell, nodes map[string]string, n int) []endpointScore {
	scores := map[string]*endpointScore{}
	get := func(name string) *endpointScore {
		if scores[name] == nil {
			scores[name] = &endpointScore{Name: name, Node: nodes[name], WorstPartnerEf: 1e9}
		}
		return scores[name]
	}
	for _, c := range cells {
		e := c.pct
		s, d := get(c.sender()), get(c.receiver())
		s.Send += e
		s.SendN++
		d.Recv += e
		d.RecvN++
		if e < s.WorstPartnerEf {
			s.WorstPartnerEf, s.WorstPartner = e, c.receiver()
		}
		if e < d.WorstPartnerEf {
			d.WorstPartnerEf, d.WorstPartner = e, c.sender()
		}
	}
	var out []endpointScore
	for _, s := range scores {
		if s.SendN > 0 {
			s.Send /= float64(s.SendN)
		}
		if s.RecvN > 0 {
			s.Recv /= float64(s.RecvN)
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := min(out[i].Send, out[i].Recv), min(out[j].Send, out[j].Recv)
		if a != b {
			return a < b
		}
		return schema.NaturalLess(out[i].Name, out[j].Name)
	})
	return out[:min(n, len(out))]
}

// maxEfficiencyBars bounds the per-pair bar chart; larger matrices are read
// on their heatmap.
const maxEfficiencyBars = 60

// efficiencyChart is % of line rate per result, worst first, coloured by
// verdict, with the expectation as a mark line.
func efficiencyChart(rs []*schema.Result) chartSpec {
	sort.SliceStable(rs, func(i, j int) bool { return schema.EfficiencyKey(rs[i]) < schema.EfficiencyKey(rs[j]) })
	var names []string
	var data []opts.BarData
	for _, r := range rs {
		name := r.Test + ": " + r.Label()
		if r.Backend != "" {
			name += " [" + r.Backend + "]"
		}
		names = append(names, name)
		data = append(data, opts.BarData{Value: math.Round(*r.Efficiency*10) / 10, ItemStyle: &opts.ItemStyle{Color: verdictColor(r.Verdict)}})
	}
	c := charts.NewBar()
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "2%", Right: "6%", Top: "24", Bottom: "24", ContainLabel: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: names, Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "% of line rate", NameLocation: "middle", NameGap: 24, Max: 100}),
	)
	c.AddSeries("% of line rate", data,
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "right", Formatter: "{c}%"}),
		charts.WithBarChartOpts(opts.BarChart{BarWidth: "60%"}))
	if pct, ok := schema.ExpectedPct(rs[0].Expectation); ok {
		charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{Name: fmt.Sprintf("expected %.0f%%", pct), XAxis: pct})(&c.MultiSeries[0])
		charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
			LineStyle: &opts.LineStyle{Color: colorLine, Type: "dashed"}, Label: &opts.Label{Show: opts.Bool(true), Formatter: "{b}"}})(&c.MultiSeries[0])
	}
	return chartSpec{Title: "% of line rate per pair (worst first)", Height: max(200, 60+26*len(rs)), Option: string(c.JSONNotEscaped())}
}
