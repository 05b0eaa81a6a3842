package html

import (
	"fmt"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
	"github.com/rdmabench/rdmabench/units"
)

// insightSections are the HTML sections of the derived views: where
// bandwidth is lost layer by layer, which links are bad, what a request's
// KV transfer costs, what the expert all-to-all adds per token.
func insightSections(r *schema.Report) []section {
	var out []section
	if wfs := schema.WaterfallsOf(r); len(wfs) > 0 {
		s := section{ID: "waterfall", Title: "Where bandwidth is lost: layer waterfall",
			Intro: "One pair, layer by layer: each bar is the layer's best bandwidth; the labels give the percent of the line rate and of the layer below."}
		for _, w := range wfs {
			s.Charts = append(s.Charts, waterfallChart(w))
			s.Tables = append(s.Tables, htmlTable{Caption: w.Pair, Head: []string{"layer", "test", "best", "% of line rate", "% of layer below"}, Rows: text.WaterfallRows(w)})
		}
		out = append(out, s)
	}
	if len(r.LowPairs) > 0 {
		s := section{ID: "lowpairs", Title: "Bad links, found and named",
			Intro: "Pairs of an all-to-all matrix below the threshold were run again: bad stays low every time, noise recovered, flaky did both."}
		for _, a := range r.LowPairs {
			t := htmlTable{Caption: a.Test + ": " + strings.Join(a.Findings, "; "), Head: []string{"pair", "matrix", "retests", "status"}}
			for _, lp := range a.Low {
				t.Rows = append(t.Rows, []string{lp.From + " → " + lp.To, units.FormatRate(lp.Bps), text.Rates(lp.RetestBps), lp.Status})
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
	if rr := schema.RailReachOf(r); len(rr) > 0 {
		out = append(out, railReachSection(rr))
	}
	if b := schema.KVBudgetOf(r); b != nil {
		s := section{ID: "kvbudget", Title: "What it costs a request: the KV-transfer budget",
			Intro: text.KVIntro(r.Serving, b)}
		head := []string{"bandwidth from", "bandwidth"}
		for _, n := range b.Contexts {
			head = append(head, fmt.Sprintf("%d tokens", n))
		}
		t := htmlTable{Caption: "milliseconds the KV transfer adds to time-to-first-token (request KV / decode rank)", Head: head}
		t.Rows = append(t.Rows, text.KVRows(b)...)
		s.Tables = append(s.Tables, t)
		out = append(out, s)
	}
	if b := schema.EPBudgetOf(r); b != nil {
		s := section{ID: "epbudget", Title: "What it costs a token: the EP budget", Intro: text.EPIntro,
			Tables: []htmlTable{{Caption: "milliseconds the expert all-to-all adds per output token (decode) and per prefill pass, at the slowest rank of each phase",
				Head: []string{"test", "stage", "tokens per rank", "dispatch", "combine", "per layer", "MoE layers", "adds"}, Rows: text.EPRows(b)}}}
		for i := range r.Results {
			if head, rows := text.EPRankRows(&r.Results[i]); rows != nil {
				s.Tables = append(s.Tables, htmlTable{Caption: r.Results[i].Test + ": µs per call, per rank and phase", Head: head, Rows: rows})
			}
		}
		out = append(out, s)
	}
	return out
}

// railReachSection is every cross-rail test: its verdict, every rail pair
// and the HCA settings for this fabric.
func railReachSection(rr []schema.RailReach) section {
	s := section{ID: "railreach", Title: "Every expert can cross: rail reachability",
		Intro: "Every NIC (rail) of an endpoint to every NIC of the others, by RDMA CM connect and a short transfer (rping): " +
			"DeepEP's internode kernels need them all to reach each other (WideEP-ready); a rail-only fabric serves NCCL, not DeepEP."}
	for _, a := range rr {
		s.Tables = append(s.Tables, htmlTable{Caption: a.Test + ": " + strings.Join(a.Findings, "; "),
			Head: []string{"from", "to", "status", "why"}, Rows: text.RailPairRows(a.Pairs)})
		if len(a.HCA) > 0 {
			t := htmlTable{Caption: a.Test + ": HCA settings for this fabric", Head: []string{"variable", "value", "why"}}
			for _, h := range a.HCA {
				t.Rows = append(t.Rows, []string{h.Name, h.Value, h.Why})
			}
			s.Tables = append(s.Tables, t)
		}
	}
	return s
}

// waterfallChart draws the layers as bars in Gb/s, the line rate first
// when known, each labelled with its percents.
func waterfallChart(w schema.Waterfall) chartSpec {
	var names []string
	var data []opts.BarData
	if w.LineRateBps > 0 {
		names = append(names, "line rate")
		data = append(data, opts.BarData{Value: round2(w.LineRateBps / 1e9), ItemStyle: &opts.ItemStyle{Color: colorLine},
			Label: &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: "100%"}})
	}
	for _, l := range w.Layers {
		label := text.Percent(l.PctLineRate) + " of line"
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
