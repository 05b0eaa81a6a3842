package html

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// newLineChart is the common frame of every "versus message size" chart:
// no animation (the page is a report, and the browser test waits for the
// first frame), an axis tooltip, a scrolling legend, readable axes.
func newLineChart(xLabels []string, xName, yName string, yLog bool) *charts.Line {
	c := charts.NewLine()
	yType := "value"
	if yLog {
		yType = "log"
	}
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Top: "0"}),
		charts.WithGridOpts(opts.Grid{Left: "2%", Right: "4%", Top: "48", Bottom: "8", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: xName, NameLocation: "middle", NameGap: 28, Data: xLabels}),
		charts.WithYAxisOpts(opts.YAxis{Type: yType, Name: yName}),
		charts.WithColorsOpts(opts.Colors(seriesPalette)),
	)
	return c
}

func lineSeriesOpts(color string, dashed bool) []charts.SeriesOpts {
	ls := opts.LineStyle{Color: color, Width: 2}
	if dashed {
		ls.Type = "dashed"
	}
	return []charts.SeriesOpts{
		charts.WithLineStyleOpts(ls),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true), SymbolSize: 5, ConnectNulls: opts.Bool(true)}),
	}
}

// withLineRate adds the line-rate mark line to the first series, and
// stretches the y axis up to it: ECharts scales the axis to the data only,
// so a test far below line rate (the one a reader must see) would
// otherwise draw its line rate off the chart.
func withLineRate(c *charts.Line, bps, div float64, unit string) {
	mark := lineRateMark(bps, div, unit)
	if mark == nil || len(c.MultiSeries) == 0 {
		return
	}
	if len(c.YAxisList) > 0 {
		c.YAxisList[0].Max = lineRateAxisMax(mark[0].YAxis.(float64))
	}
	charts.WithMarkLineNameYAxisItemOpts(mark...)(&c.MultiSeries[0])
	charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
		Symbol:    []string{"none", "none"},
		LineStyle: &opts.LineStyle{Color: colorLine, Type: "dashed", Width: 1.5},
		Label:     &opts.Label{Show: opts.Bool(true), Position: "insideEndTop", Formatter: "{b}"},
	})(&c.MultiSeries[0])
}

// maxSeriesPerChart bounds the lines of one chart; a test with more
// results (an all-to-all matrix) is drawn as its envelope instead.
const maxSeriesPerChart = 8

// bandwidthChart is bandwidth versus message size for one test.
func bandwidthChart(test string, rs []*schema.Result) chartSpec {
	sizes, labels := sizeAxis(rs)
	metric := rs[0].Metric
	div, unit := unitFor(rs[0].Family)
	c := newLineChart(labels, "message size", unit, false)
	note := ""
	if len(rs) <= maxSeriesPerChart {
		banded := false
		for i, r := range rs {
			name := r.Pair()
			if r.Backend != "" {
				name += " [" + r.Backend + "]"
			}
			color := seriesPalette[i%len(seriesPalette)]
			c.AddSeries(name, lineValues(r, sizes, pickMetric(metric), div), lineSeriesOpts(color, false)...)
			banded = addSpreadBand(c, name, r, sizes, div, color) || banded
		}
		note = spreadNote(c, banded)
	} else {
		note = envelopeSeries(c, rs, sizes, metric, div)
	}
	withLineRate(c, lineRateOf(rs), div, unit)
	return chartSpec{Title: test + " — bandwidth versus message size", Note: note, Option: string(c.JSONNotEscaped())}
}

// envelopeSeries draws min, median and max over many results, and the
// worst result by name, so that a slow pair stands out of 4,032.
func envelopeSeries(c *charts.Line, rs []*schema.Result, sizes []int64, metric parsers.Metric, div float64) string {
	mins, meds, maxs := make([]opts.LineData, len(sizes)), make([]opts.LineData, len(sizes)), make([]opts.LineData, len(sizes))
	for i, sz := range sizes {
		xs := figuresAt(rs, sz, metric, div)
		if len(xs) == 0 {
			mins[i], meds[i], maxs[i] = opts.LineData{Value: "-"}, opts.LineData{Value: "-"}, opts.LineData{Value: "-"}
			continue
		}
		mins[i], meds[i], maxs[i] = opts.LineData{Value: round2(xs[0])}, opts.LineData{Value: round2(xs[len(xs)/2])}, opts.LineData{Value: round2(xs[len(xs)-1])}
	}
	c.AddSeries("max", maxs, lineSeriesOpts("#90a4ae", true)...)
	c.AddSeries("median", meds, lineSeriesOpts("#1565c0", false)...)
	c.AddSeries("min", mins, lineSeriesOpts("#90a4ae", true)...)
	worst := rs[schema.WorstFirst(derefs(rs))[0]]
	c.AddSeries("worst: "+worst.Pair(), lineValues(worst, sizes, pickMetric(metric), div), lineSeriesOpts(colorFail, false)...)
	return fmt.Sprintf("%d results: min, median and max over all pairs, and the worst pair by name.", len(rs))
}

// spreadPrefix names the band series of a result measured more than once;
// the legend and the tooltip leave them out.
const spreadPrefix = "spread of "

// addSpreadBand shades a result's min–max over its repetitions around its
// line (two stacked series: the invisible min, then max − min filled), for
// the sizes measured more than once. It reports whether it drew any.
// Only headline bandwidths (the result's Metric) have stats per size.
func addSpreadBand(c *charts.Line, name string, r *schema.Result, sizes []int64, div float64, color string) bool {
	at := map[int64]schema.SizeStats{}
	for _, st := range r.Stats {
		if st.N > 1 && st.Metric == r.Metric {
			at[st.Bytes] = st
		}
	}
	if len(at) == 0 {
		return false
	}
	lo, span := make([]opts.LineData, len(sizes)), make([]opts.LineData, len(sizes))
	for i, sz := range sizes {
		lo[i], span[i] = opts.LineData{Value: "-"}, opts.LineData{Value: "-"}
		if st, ok := at[sz]; ok {
			lo[i], span[i] = opts.LineData{Value: round2(st.Min / div)}, opts.LineData{Value: round2((st.Max - st.Min) / div)}
		}
	}
	stack := spreadPrefix + name
	hidden := charts.WithLineStyleOpts(opts.LineStyle{Opacity: opts.Float(0)})
	c.AddSeries(stack+" (min)", lo, charts.WithLineChartOpts(opts.LineChart{Stack: stack, ShowSymbol: opts.Bool(false)}), hidden)
	c.AddSeries(stack, span, charts.WithLineChartOpts(opts.LineChart{Stack: stack, ShowSymbol: opts.Bool(false)}), hidden,
		charts.WithAreaStyleOpts(opts.AreaStyle{Color: color, Opacity: opts.Float(0.18)}))
	return true
}

// spreadNote keeps band series out of the legend and the tooltip and says
// what the shading is; "" when no result has a band.
func spreadNote(c *charts.Line, banded bool) string {
	if !banded {
		return ""
	}
	var names []string
	for _, s := range c.MultiSeries {
		if !strings.HasPrefix(s.Name, spreadPrefix) {
			names = append(names, s.Name)
		}
	}
	c.Legend.Data = names
	// Its text is HTML to ECharts: the names in it are escaped.
	c.Tooltip.Formatter = jsFunc(`function (ps) { var h = echarts.format.encodeHTML, out = ps.length ? h(ps[0].axisValueLabel) : ''; ps.forEach(function (p) { if (p.seriesName.indexOf('` + spreadPrefix + `') !== 0) { out += '<br/>' + p.marker + h(p.seriesName) + ': ' + p.value; } }); return out; }`)
	return "The shaded band around a line is the lowest to the highest of its repetitions at each size."
}

// figuresAt is every result's figure at one size, in the chart's unit,
// sorted.
func figuresAt(rs []*schema.Result, size int64, metric parsers.Metric, div float64) []float64 {
	var xs []float64
	for _, r := range rs {
		for _, s := range r.Samples {
			if s.Bytes == size {
				if v, ok := parsers.Figure(metric, &s); ok && finite(v) {
					xs = append(xs, v/div)
				}
			}
		}
	}
	sort.Float64s(xs)
	return xs
}

func derefs(rs []*schema.Result) []schema.Result {
	out := make([]schema.Result, len(rs))
	for i, r := range rs {
		out[i] = *r
	}
	return out
}

func lineRateOf(rs []*schema.Result) float64 {
	for _, r := range rs {
		if r.LineRate != nil && r.LineRate.Bps > 0 {
			return r.LineRate.Bps
		}
	}
	return 0
}

// ncclChart is bus bandwidth versus size for collective results, out of
// place and in place, in GB/s as nccl-tests prints it.
func ncclChart(test string, rs []*schema.Result) chartSpec {
	sizes, labels := sizeAxis(rs)
	c := newLineChart(labels, "message size", "busbw GB/s", false)
	banded := false
	for i, r := range rs {
		color := seriesPalette[i%len(seriesPalette)]
		name := r.Tool
		if len(rs) > 1 {
			name += " " + r.Pair()
		}
		c.AddSeries(name+" out-of-place", lineValues(r, sizes, pickMetric(parsers.MetricBusBW), 8e9), lineSeriesOpts(color, false)...)
		banded = addSpreadBand(c, name+" out-of-place", r, sizes, 8e9, color) || banded
		inplace := func(s *sampleRef) (float64, bool) {
			if p := s.r.Samples[s.i].InplaceBusBWBps; p != nil {
				return *p, true
			}
			return 0, false
		}
		if hasSample(r, func(s *sampleRef) bool { _, ok := inplace(s); return ok }) {
			c.AddSeries(name+" in-place", lineValues(r, sizes, inplace, 8e9), lineSeriesOpts(color, true)...)
		}
	}
	withLineRate(c, lineRateOf(rs), 8e9, "GB/s")
	return chartSpec{Title: test + " — NCCL bus bandwidth versus size", Note: spreadNote(c, banded), Option: string(c.JSONNotEscaped())}
}

func hasSample(r *schema.Result, ok func(*sampleRef) bool) bool {
	for i := range r.Samples {
		if ok(&sampleRef{r, i}) {
			return true
		}
	}
	return false
}

// latencyChart is the latency percentiles of one result versus size.
func latencyChart(r *schema.Result) chartSpec {
	sizes, labels := sizeAxis([]*schema.Result{r})
	c := newLineChart(labels, "message size", "latency µs", false)
	fields := []struct {
		name  string
		color string
		get   func(*sampleRef) *float64
	}{
		{"min", "#90a4ae", func(s *sampleRef) *float64 { return s.r.Samples[s.i].LatMinUS }},
		{"median (typical)", "#1565c0", func(s *sampleRef) *float64 { return s.r.Samples[s.i].LatTypicalUS }},
		{"average", "#00897b", func(s *sampleRef) *float64 { return s.r.Samples[s.i].LatAvgUS }},
		{"p99", "#f9a825", func(s *sampleRef) *float64 { return s.r.Samples[s.i].LatP99US }},
		{"p99.9", "#c62828", func(s *sampleRef) *float64 { return s.r.Samples[s.i].LatP999US }},
	}
	banded := false
	for _, f := range fields {
		get := f.get
		pick := func(s *sampleRef) (float64, bool) {
			if p := get(s); p != nil {
				return *p, true
			}
			return 0, false
		}
		if hasSample(r, func(s *sampleRef) bool { return get(s) != nil }) {
			c.AddSeries(f.name, lineValues(r, sizes, pick, 1), lineSeriesOpts(f.color, false)...)
			// The headline latency (parsers.MetricLatency: the average,
			// else the typical) is what the repetitions' stats are of.
			if !banded && (f.name == "average" || f.name == "median (typical)" && !hasSample(r, func(s *sampleRef) bool { return s.r.Samples[s.i].LatAvgUS != nil })) {
				banded = addSpreadBand(c, f.name, r, sizes, 1, f.color)
			}
		}
	}
	title := fmt.Sprintf("%s — %s latency percentiles, %s", r.Test, r.Tool, r.Pair())
	return chartSpec{Title: title, Note: spreadNote(c, banded), Option: string(c.JSONNotEscaped())}
}

// nixlChart compares NIXL backends (UCX, UCCL, LIBFABRIC …) per block size.
func nixlChart(title string, rs []*schema.Result) chartSpec {
	sizes, labels := sizeAxis(rs)
	c := newLineChart(labels, "block size", "Gb/s", false)
	seen := map[string]int{}
	for _, r := range rs {
		seen[r.Backend]++
	}
	banded := false
	for i, r := range rs {
		name := r.Backend
		if name == "" || seen[name] > 1 { // one backend twice: the tests tell them apart
			name = strings.TrimSpace(r.Backend + " (" + r.Test + ")")
		}
		color := seriesPalette[i%len(seriesPalette)]
		c.AddSeries(name, lineValues(r, sizes, pickMetric(parsers.MetricBandwidth), 1e9), lineSeriesOpts(color, false)...)
		banded = addSpreadBand(c, name, r, sizes, 1e9, color) || banded
	}
	withLineRate(c, lineRateOf(rs), 1e9, "Gb/s")
	return chartSpec{Title: title, Note: spreadNote(c, banded), Option: string(c.JSONNotEscaped())}
}
