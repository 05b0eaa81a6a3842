package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/rdmabench/rdmabench/units"
)

// insightSections are the HTML sections of the derived views: where
// bandwidth is lost layer by layer, which links are bad, what a request's
// KV transfer costs.
func insightSections(r *Report) []section {
	var out []section
	if wfs := WaterfallsOf(r); len(wfs) > 0 {
		s := section{ID: "waterfall", Title: "Where bandwidth is lost: layer waterfall",
			Intro: "One pair, layer by layer: each bar is the layer's best bandwidth; the labels give the percent of the line rate and of the layer below."}
		for _, w := range wfs {
			s.Charts = append(s.Charts, waterfallChart(w))
			s.Tables = append(s.Tables, htmlTable{Caption: w.Pair, Head: []string{"layer", "test", "best", "% of line rate", "% of layer below"}, Rows: waterfallRows(w)})
		}
		out = append(out, s)
	}
	if len(r.LowPairs) > 0 {
		s := section{ID: "lowpairs", Title: "Bad links, found and named",
			Intro: "Pairs of an all-to-all matrix below the threshold were run again: bad stays low every time, noise recovered, flaky did both."}
		for _, a := range r.LowPairs {
			t := htmlTable{Caption: a.Test + ": " + strings.Join(a.Findings, "; "), Head: []string{"pair", "matrix", "retests", "status"}}
			for _, lp := range a.Low {
				t.Rows = append(t.Rows, []string{lp.From + " → " + lp.To, units.FormatRate(lp.Bps), rates(lp.RetestBps), lp.Status})
			}
			s.Tables = append(s.Tables, t)
			if len(a.Endpoints) > 0 {
				e := htmlTable{Caption: a.Test + ": endpoints by confirmed low pairs", Head: []string{"endpoint", "node", "device", "low pairs"}}
				for _, x := range a.Endpoints {
					e.Rows = append(e.Rows, []string{x.Name, x.Node, x.Device, fmt.Sprint(x.LowPairs)})
				}
				s.Tables = append(s.Tables, e)
			}
		}
		out = append(out, s)
	}
	if b := KVBudgetOf(r); b != nil {
		s := section{ID: "kvbudget", Title: "What it costs a request: the KV-transfer budget",
			Intro: kvIntro(r.Serving, b)}
		head := []string{"bandwidth from", "bandwidth"}
		for _, n := range b.Contexts {
			head = append(head, fmt.Sprintf("%d tokens", n))
		}
		t := htmlTable{Caption: "milliseconds the KV transfer adds to time-to-first-token (request KV / decode rank)", Head: head}
		t.Rows = append(t.Rows, kvRows(b)...)
		s.Tables = append(s.Tables, t)
		out = append(out, s)
	}
	return out
}

func rates(bps []float64) string {
	var s []string
	for _, b := range bps {
		s = append(s, units.FormatRate(b))
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func pctText(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *p)
}

func waterfallRows(w Waterfall) [][]string {
	var rows [][]string
	for _, l := range w.Layers {
		below := pctText(l.PctOfBelow)
		if l.Below != "" {
			below += " of " + l.Below
		}
		rows = append(rows, []string{l.Layer, l.Test, units.FormatRate(l.BestBps), pctText(l.PctLineRate), below})
	}
	return rows
}

// waterfallChart draws the layers as bars in Gb/s, the line rate first
// when known, each labelled with its percents.
func waterfallChart(w Waterfall) chartSpec {
	var names []string
	var data []opts.BarData
	if w.LineRateBps > 0 {
		names = append(names, "line rate")
		data = append(data, opts.BarData{Value: round2(w.LineRateBps / 1e9), ItemStyle: &opts.ItemStyle{Color: colorLine},
			Label: &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: "100%"}})
	}
	for _, l := range w.Layers {
		label := pctText(l.PctLineRate) + " of line"
		if l.PctOfBelow != nil {
			label += fmt.Sprintf(" · %.1f%% of below", *l.PctOfBelow)
		}
		names = append(names, l.Layer)
		data = append(data, opts.BarData{Value: round2(l.BestBps / 1e9), ItemStyle: &opts.ItemStyle{Color: seriesPalette[(l.Level-1)%len(seriesPalette)]},
			Label: &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: label}})
	}
	c := charts.NewBar()
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "2%", Right: "2%", Top: "40", Bottom: "24", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: names, Name: "layer", NameLocation: "middle", NameGap: 28, AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "Gb/s"}),
	)
	c.AddSeries("best bandwidth", data, charts.WithBarChartOpts(opts.BarChart{BarWidth: "50%"}))
	return chartSpec{Title: w.Pair, Height: 360, Option: string(c.JSONNotEscaped())}
}

func kvIntro(s *ServingSetup, b *KVBudget) string {
	shape := ""
	if s != nil {
		name := s.Model
		if name == "" {
			name = "model"
		}
		if s.LatentDim > 0 {
			shape = fmt.Sprintf("%s: %d layers × MLA latent %d × %s", name, s.Layers, s.LatentDim, s.KVDtype)
		} else {
			shape = fmt.Sprintf("%s: %d layers × 2 (K, V) × %d KV heads × head dim %d × %s", name, s.Layers, s.KVHeads, s.HeadDim, s.KVDtype)
		}
		shape += fmt.Sprintf(", prefill TP %d → decode TP %d, %d-token blocks. ", s.PrefillTP, s.DecodeTP, s.BlockTokens)
	}
	return fmt.Sprintf("%s%s of KV per token; each decode rank pulls %s of a request at once over its own NIC, in %s blocks (the nixlbench size the bandwidth is read at; the worst pair per backend).",
		shape, units.FormatSize(b.BytesPerToken), shareText(b.RankShare), units.FormatSize(b.BlockBytes))
}

func shareText(f float64) string {
	if f >= 1 {
		return "all"
	}
	return fmt.Sprintf("1/%d", int(math.Round(1/f)))
}

// kvRows are the budget's rows: source, bandwidth, then per context length
// "ms (request bytes / rank bytes)".
func kvRows(b *KVBudget) [][]string {
	var rows [][]string
	for _, src := range b.Rows {
		name := src.Source
		if src.Backend != "" {
			name += " " + src.Backend
		}
		bw := units.FormatRate(src.Bps)
		if src.AtBytes > 0 {
			bw += " @" + FormatSizeShort(src.AtBytes)
		}
		if src.Measured {
			bw += " (measured)"
		}
		row := []string{name, bw}
		for _, c := range src.Costs {
			if c.Missing {
				row = append(row, "not measured")
				continue
			}
			row = append(row, fmt.Sprintf("%.2f ms (%s / %s)", c.TTFTms, units.FormatSize(c.RequestBytes), units.FormatSize(c.RankBytes)))
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteInsights writes the derived views under the summary table: the
// waterfall per pair, the low-pair findings, the KV budget. Nothing when
// the run has none.
func WriteInsights(w io.Writer, r *Report) error {
	var b strings.Builder
	writeSamples(&b, r.Samples)
	for _, wf := range WaterfallsOf(r) {
		fmt.Fprintf(&b, "\nWaterfall %s:\n", wf.Pair)
		writeAligned(&b, append([][]string{{"LAYER", "TEST", "BEST", "% LINE", "% OF BELOW"}}, waterfallRows(wf)...))
	}
	for _, a := range r.LowPairs {
		fmt.Fprintf(&b, "\nLow pairs of %s:\n", a.Test)
		for _, f := range a.Findings {
			fmt.Fprintf(&b, "  %s\n", f)
		}
		if len(a.Low) > 0 {
			rows := [][]string{{"PAIR", "MATRIX", "RETESTS", "STATUS"}}
			for _, lp := range a.Low {
				rows = append(rows, []string{lp.From + " → " + lp.To, units.FormatRate(lp.Bps), rates(lp.RetestBps), lp.Status})
			}
			writeAligned(&b, rows)
		}
	}
	if kb := KVBudgetOf(r); kb != nil {
		fmt.Fprintf(&b, "\nKV-transfer budget: %s\n", kvIntro(r.Serving, kb))
		head := []string{"FROM", "BANDWIDTH"}
		for _, n := range kb.Contexts {
			head = append(head, fmt.Sprintf("%d TOKENS", n))
		}
		writeAligned(&b, append([][]string{head}, kvRows(kb)...))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAligned writes rows as space-aligned columns, indented by two.
func writeAligned(b *strings.Builder, rows [][]string) {
	width := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		line.WriteString(" ")
		for i, c := range r {
			line.WriteString("  " + c + strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
