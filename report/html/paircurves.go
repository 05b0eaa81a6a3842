package html

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// matrixPayload is what a heatmap's script needs beyond the cells: the
// names its cells index, the unit, and every pair's bandwidth per size for
// the pair chart. The curves are packed (two bytes per pair and size) so
// that a 256-endpoint matrix carries all 65,280 curves in about 1.4 MB of
// base64, where JSON numbers would take several times that.
type matrixPayload struct {
	Endpoints []string `json:"endpoints"`
	Unit      string   `json:"unit"`
	// Of is what the cells' percents are of: line rate, or the best pair.
	Of string `json:"of"`
	// Sizes labels the curves' points; empty for a one-size matrix.
	Sizes []string `json:"sizes,omitempty"`
	// Scale is the bandwidth (in Unit) that curveFull stands for.
	Scale float64 `json:"scale,omitempty"`
	// Curves: base64 of little-endian uint16, cell by cell in the heatmap's
	// order, one per size; curveMissing where the pair has no sample.
	Curves string `json:"curves,omitempty"`
}

const (
	curveFull    = 65534
	curveMissing = 65535
)

// packCurves quantises each cell's bandwidth per size to 1/65534 of the
// matrix's best: 0.006 Gb/s at 400 Gb/s, below what any tool resolves.
func packCurves(cells []*schema.Result, sizes []int64, pick func(*sampleRef) (float64, bool), div float64) (float64, string) {
	vals := make([][]float64, len(cells))
	scale := 0.0
	for i, r := range cells {
		vals[i] = curveValues(r, sizes, pick, div)
		for j, v := range vals[i] {
			if !finite(v) {
				vals[i][j] = math.NaN() // not drawable: not measured
				continue
			}
			scale = max(scale, v)
		}
	}
	if scale == 0 {
		scale = 1
	}
	buf := make([]byte, 0, 2*len(cells)*len(sizes))
	for _, vs := range vals {
		for _, v := range vs {
			u := uint16(curveMissing)
			if !math.IsNaN(v) {
				u = uint16(math.Round(max(v, 0) / scale * curveFull))
			}
			buf = binary.LittleEndian.AppendUint16(buf, u)
		}
	}
	return scale, base64.StdEncoding.EncodeToString(buf)
}

// curveValues is one result's figure per size (NaN where not measured),
// in the unit of the chart.
func curveValues(r *schema.Result, sizes []int64, pick func(*sampleRef) (float64, bool), div float64) []float64 {
	out := make([]float64, len(sizes))
	for i, d := range lineValues(r, sizes, pick, div) {
		out[i] = math.NaN()
		if v, ok := d.Value.(float64); ok {
			out[i] = v
		}
	}
	return out
}

// pairCurveChart follows a heatmap with more than one size: the worst pair
// of the matrix at first, any pair a reader clicks after, against the
// median of all pairs and the line rate. Its sizes are the heatmap's
// payload's: the same cells.
func pairCurveChart(test string, cells []matrixCell) chartSpec {
	rs := cellResults(cells)
	sizes, labels := sizeAxis(rs)
	metric := rs[0].Metric
	div, unit := unitFor(rs[0].Family)
	worst := cells[0]
	for _, c := range cells[1:] {
		if c.pct < worst.pct {
			worst = c
		}
	}
	c := newLineChart(labels, "message size", unit, false)
	c.SetGlobalOptions(withPairTitle(worst.r.From + " → " + worst.r.To))
	c.AddSeries("selected pair", lineValues(worst.r, sizes, pickMetric(metric), div), lineSeriesOpts(colorFail, false)...)
	c.AddSeries("median of all pairs", medianCurve(rs, sizes, metric, div), lineSeriesOpts("#1565c0", true)...)
	withLineRate(c, lineRateOf(rs), div, unit)
	return chartSpec{Title: test + " — one pair's bandwidth versus message size",
		Note:   fmt.Sprintf("The worst pair, %s, until a cell of the matrix above is clicked.", worst.r.Pair()),
		Option: string(c.JSONNotEscaped())}
}

// medianCurve is the median over results per size.
func medianCurve(rs []*schema.Result, sizes []int64, metric parsers.Metric, div float64) []opts.LineData {
	out := make([]opts.LineData, len(sizes))
	for i, sz := range sizes {
		out[i] = opts.LineData{Value: "-"}
		if xs := figuresAt(rs, sz, metric, div); len(xs) > 0 {
			out[i] = opts.LineData{Value: round2(xs[len(xs)/2])}
		}
	}
	return out
}

// withPairTitle names the drawn pair at the chart's top left; the page's
// script renames it on a click.
func withPairTitle(pair string) charts.GlobalOpts {
	return charts.WithTitleOpts(opts.Title{Title: pair, Left: "2%", Top: "0",
		TitleStyle: &opts.TextStyle{FontSize: 12, Color: colorFail}})
}
