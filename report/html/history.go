package html

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/report/history"
)

//go:embed history.tmpl
var historyTemplate string

var historyPageTemplate = template.Must(template.New("history").Funcs(templateFuncs).Parse(historyTemplate))

// MaxHistoryCharts bounds the trend charts of one page, worst series first
// (stepped down, then furthest below their median): a 64-endpoint matrix
// has 48,384 series, and a page of that many charts opens for nobody.
const MaxHistoryCharts = 60

// maxHistoryHTMLRows bounds the series table of the page.
const maxHistoryHTMLRows = 2000

// HistoryOptions tunes WriteHistory.
type HistoryOptions struct {
	// Dir is the folder the HTML file is written to: links to each run's
	// report are made relative to it, so the page and the runs can move
	// together.
	Dir string
}

// historyPage is what history.tmpl renders.
type historyPage struct {
	H       *history.History
	First   string
	Last    string
	Stepped int
	Runs    []historyRunLink
	Rows    [][]string
	Hidden  int
	Charts  []historyChart
	More    int
	ECharts string
}

type historyRunLink struct {
	ID, Date, Verdict, Href, Scenario string
}

// historyChart is one trend chart and, for clicks, the run of each point.
type historyChart struct {
	chartSpec
	Runs string // JSON array of run indexes, aligned with the points
}

// WriteHistory writes a history as one offline HTML file: a trend
// chart per series (the worst MaxHistoryCharts), each with its line rate,
// expectation, noise band, step and the environment changes on the time
// axis; clicking a point opens that run's report; a table of every series
// and every run with links.
func WriteHistory(w io.Writer, h *history.History, o HistoryOptions) error {
	js := echartsJS()
	p := &historyPage{H: h, ECharts: js, Stepped: h.SteppedDown()}
	if len(h.Runs) > 0 {
		p.First, p.Last = h.Runs[0].Start.UTC().Format("2006-01-02"), h.Runs[len(h.Runs)-1].Start.UTC().Format("2006-01-02")
	}
	for _, r := range h.Runs {
		target := r.HTML
		if target == "" {
			target = r.Path
		}
		p.Runs = append(p.Runs, historyRunLink{ID: r.ID, Date: r.Start.UTC().Format("2006-01-02 15:04"), Verdict: r.Verdict,
			Href: relLink(o.Dir, target), Scenario: r.Scenario})
	}
	for i, s := range h.Series {
		if i >= maxHistoryHTMLRows {
			p.Hidden = len(h.Series) - i
			break
		}
		p.Rows = append(p.Rows, history.RowCells(s))
	}
	for i, s := range h.Series {
		if i >= MaxHistoryCharts {
			p.More = len(h.Series) - i
			break
		}
		spec := trendChart(h, s)
		spec.ID, spec.Option = fmt.Sprintf("chart-%d", i+1), optionJSON(spec.Option)
		p.Charts = append(p.Charts, historyChart{chartSpec: spec, Runs: intsJSON(s.Runs)})
	}
	return historyPageTemplate.Execute(w, p)
}

// relLink is target relative to dir, as a URL path.
func relLink(dir, target string) string {
	if dir != "" {
		ad, err1 := filepath.Abs(dir)
		at, err2 := filepath.Abs(target)
		if err1 == nil && err2 == nil {
			if rel, err := filepath.Rel(ad, at); err == nil {
				return filepath.ToSlash(rel)
			}
		}
	}
	return filepath.ToSlash(target)
}

func intsJSON(xs []int32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(x)))
	}
	b.WriteByte(']')
	return b.String()
}

// trendChart is one series over time.
func trendChart(h *history.History, s *history.Series) chartSpec {
	div, unit := 1.0, "µs"
	if !s.LowerIsBetter() {
		div, unit = unitFor(s.Family)
	}
	ms := func(run int32) int64 { return h.Runs[run].Start.UnixMilli() }
	data := make([]opts.LineData, len(s.Values))
	for i, v := range s.Values {
		data[i] = opts.LineData{Value: []any{ms(s.Runs[i]), round2(v / div)}}
	}
	c := charts.NewLine()
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "2%", Right: "4%", Top: "36", Bottom: "8", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "time", Name: "run start (UTC)", NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: unit, Scale: opts.Bool(true)}),
	)
	c.AddSeries(string(s.Metric), data, lineSeriesOpts(seriesPalette[0], false)...)
	series := &c.MultiSeries[0]
	var lines []any
	if s.LineRateBps > 0 && !s.LowerIsBetter() {
		lines = append(lines, opts.MarkLineNameYAxisItem{Name: "line rate", YAxis: round2(s.LineRateBps / div)})
	}
	if s.Expect > 0 {
		lines = append(lines, opts.MarkLineNameYAxisItem{Name: "expected", YAxis: round2(s.Expect / div)})
	}
	for _, ch := range h.Changes {
		if ch.Scenario == s.Scenario {
			lines = append(lines, opts.MarkLineNameXAxisItem{Name: term.OneLine(strings.Join(ch.What, "; "), 60), XAxis: ch.Time.UnixMilli()})
		}
	}
	if st := s.Step; st != nil {
		series.MarkPoints = &opts.MarkPoints{Data: []any{opts.MarkPointNameCoordItem{
			Name: "stepped down", Coordinate: []any{st.Time.UnixMilli(), round2(st.After / div)}, Symbol: "pin", SymbolSize: 40,
			Value: fmt.Sprintf("%+.0f%%", st.ChangePct), ItemStyle: &opts.ItemStyle{Color: colorFail}}}}
	}
	if len(lines) > 0 {
		series.MarkLines = &opts.MarkLines{Data: lines, MarkLineStyle: opts.MarkLineStyle{Symbol: []string{"none", "none"},
			LineStyle: &opts.LineStyle{Color: colorLine, Type: "dashed", Width: 1.2},
			Label:     &opts.Label{Show: opts.Bool(true), Position: "insideEndTop", Formatter: "{b}"}}}
	}
	// The noise band: ±StepK noise around the level the series is judged
	// against (before its step, else its median).
	level := s.Median
	if s.Step != nil {
		level = s.Step.Before
	}
	series.MarkAreas = &opts.MarkAreas{
		Data: []any{[]any{map[string]any{"name": fmt.Sprintf("noise ±%g×", history.StepK), "yAxis": round2((level - history.StepK*s.Noise) / div)},
			map[string]any{"yAxis": round2((level + history.StepK*s.Noise) / div)}}},
		MarkAreaStyle: opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: "rgba(21,101,192,0.10)"},
			Label: &opts.Label{Show: opts.Bool(true), Position: "insideTopLeft", Formatter: "{b}"}},
	}
	title := s.Scenario + " · " + s.Name()
	note := fmt.Sprintf("latest %s · best %s · median %s · noise ±%s", s.Format(s.Latest), s.Format(s.Best), s.Format(s.Median), s.Format(s.Noise))
	if st := s.Step; st != nil {
		note += fmt.Sprintf(" · stepped down %+.1f%% at %s (%s)", st.ChangePct, st.RunID, st.Time.UTC().Format("2006-01-02"))
	}
	return chartSpec{Title: title, Note: note, Height: 280, Option: string(c.JSONNotEscaped())}
}
