package html

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/compare"
)

// comparePage is what compare.tmpl renders.
type comparePage struct {
	C       *compare.Comparison
	Counts  [][2]any
	Rows    []compareHTMLRow
	Hidden  int
	Charts  []chartSpec
	ECharts string
}

type compareHTMLRow struct {
	Status                                                  string
	Test, Pair, Backend, Size, Baseline, Current, Change, P string
	Note                                                    string
}

// maxCompareHTMLRows bounds the change table of the HTML (one row per
// result and status; -o json has every size).
const maxCompareHTMLRows = 2000

// maxCompareChartBars bounds the change chart to the worst results.
const maxCompareChartBars = 40

// WriteCompare writes a comparison as one offline HTML file: the
// environment warnings, the worst change of each result as a chart, and
// every row that is not unchanged.
func WriteCompare(w io.Writer, c *compare.Comparison) error {
	js := echartsJS()
	p := &comparePage{C: c, ECharts: js}
	for _, k := range []string{compare.StatusBroken, compare.StatusRegression, compare.StatusMissing, compare.StatusNoise, compare.StatusNew, compare.StatusImprovement, compare.StatusUnchanged} {
		p.Counts = append(p.Counts, [2]any{k, c.Counts[k]})
	}
	p.Hidden = len(c.Rows) - compare.CountChanged(c.Rows)
	for _, f := range compare.FoldRows(c.Rows, maxCompareHTMLRows) {
		r := f.Row
		cells := compare.RowCells(r)
		note := r.Note
		if f.More > 0 {
			note = strings.TrimSpace(fmt.Sprintf("%s (+%d more sizes, %s)", note, f.More, r.Status))
		}
		p.Rows = append(p.Rows, compareHTMLRow{Status: r.Status, Test: r.Test, Pair: r.Pair, Backend: r.Backend,
			Size: cells[4], Baseline: cells[5], Current: cells[6], Change: cells[7], P: cells[8], Note: note})
	}
	if spec, ok := changeChart(c); ok {
		spec.ID, spec.Option = "chart-1", optionJSON(spec.Option)
		p.Charts = append(p.Charts, spec)
	}
	return comparePageTemplate.Execute(w, p)
}

// changeChart is the most telling change of each compared result (over its
// sizes), worst first, coloured by status, with the threshold marked; only
// results that changed, when any did.
func changeChart(c *compare.Comparison) (chartSpec, bool) {
	type worst struct {
		name   string
		change float64
		status string
	}
	by := map[string]*worst{}
	for _, r := range c.Rows {
		if r.ChangePct == nil {
			continue
		}
		ch := *r.ChangePct
		if r.Metric == parsers.MetricLatency {
			ch = -ch // plotted as "better is right" for every metric
		}
		name := r.Test + ": " + r.Pair
		if r.Backend != "" {
			name += " [" + r.Backend + "]"
		}
		w := by[name]
		if w == nil {
			by[name] = &worst{name, ch, r.Status}
			continue
		}
		// A result shows its most telling row: the worst drop that counts,
		// else its largest change.
		if rank, cur := compare.StatusRank(r.Status), compare.StatusRank(w.status); rank < cur ||
			rank == cur && (r.Status == compare.StatusImprovement && ch > w.change || r.Status != compare.StatusImprovement && ch < w.change) {
			w.change, w.status = ch, r.Status
		}
	}
	changed := map[string]*worst{}
	for k, w := range by {
		if w.status != compare.StatusUnchanged {
			changed[k] = w
		}
	}
	if len(changed) > 0 {
		by = changed
	}
	if len(by) == 0 {
		return chartSpec{}, false
	}
	var ws []*worst
	for _, w := range by {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].change != ws[j].change {
			return ws[i].change < ws[j].change
		}
		return ws[i].name < ws[j].name
	})
	ws = ws[:min(len(ws), maxCompareChartBars)]
	colors := map[string]string{compare.StatusRegression: colorFail, compare.StatusNoise: "#8d6e63", compare.StatusImprovement: colorPass, compare.StatusUnchanged: "#9e9e9e"}
	var names []string
	var data []opts.BarData
	for _, w := range ws {
		names = append(names, w.name)
		pos := "right"
		if w.change < 0 {
			pos = "left"
		}
		data = append(data, opts.BarData{Value: round2(w.change), ItemStyle: &opts.ItemStyle{Color: colors[w.status]},
			Label: &opts.Label{Show: opts.Bool(true), Position: pos, Formatter: "{c}%"}})
	}
	ch := charts.NewBar()
	ch.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "2%", Right: "6%", Top: "24", Bottom: "24", ContainLabel: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: names, Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		// Room beyond the longest bar for its label: a −95% label would
		// otherwise run over the pair's name.
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "change % (negative = worse)", NameLocation: "middle", NameGap: 24,
			Min: jsFunc("function (e) { return e.min < 0 ? Math.floor(e.min * 1.2 / 10) * 10 : null; }"),
			Max: jsFunc("function (e) { return e.max > 0 ? Math.ceil(e.max * 1.2 / 10) * 10 : null; }")}),
	)
	ch.AddSeries("change", data)
	charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{Name: fmt.Sprintf("−%g%%", c.ThresholdPct), XAxis: -c.ThresholdPct})(&ch.MultiSeries[0])
	charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
		LineStyle: &opts.LineStyle{Color: colorLine, Type: "dashed"}, Label: &opts.Label{Show: opts.Bool(true), Formatter: "{b}"}})(&ch.MultiSeries[0])
	return chartSpec{Title: "Change per result", Height: max(220, 70+24*len(ws)), Option: string(ch.JSONNotEscaped())}, true
}
