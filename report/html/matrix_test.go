package html

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// chartsOf are the charts of r's sections, as the page draws them.
func chartsOf(r *schema.Report) []chartSpec {
	var out []chartSpec
	for _, s := range buildSections(r) {
		out = append(out, s.Charts...)
	}
	return out
}

// heatmapOf is r's first heatmap and the chart after it.
func heatmapOf(t *testing.T, r *schema.Report) (heat chartSpec, next *chartSpec) {
	t.Helper()
	cs := chartsOf(r)
	for i, c := range cs {
		if c.Matrix != "" {
			if i+1 < len(cs) {
				next = &cs[i+1]
			}
			return c, next
		}
	}
	t.Fatal("no heatmap")
	return chartSpec{}, nil
}

func optionOf(t *testing.T, option string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(option), &m); err != nil {
		t.Fatalf("option does not parse: %v\n%.300s", err, option)
	}
	return m
}

func heatCells(t *testing.T, heat chartSpec) []any {
	t.Helper()
	data, _ := optionOf(t, heat.Option)["series"].([]any)[0].(map[string]any)["data"].([]any)
	return data
}

// A test with one leg per size (args.sizes) and repetitions keeps every
// size's spread once its legs are drawn as one line.
func TestSpreadBandAcrossSizeLegs(t *testing.T) {
	leg := func(size int64, bw float64) schema.Result {
		return schema.Result{Test: "ucx-bw", Tool: "ucx_perftest", Family: fixture.Family("ucx_perftest"), Metric: parsers.MetricBandwidth,
			From: "a-0", To: "b-0", Variant: "v", Verdict: schema.VerdictPass, BestBps: bw, BestBytes: size,
			Samples: []parsers.Sample{{Bytes: size, BWAvgBps: &bw}},
			Stats:   []schema.SizeStats{{Bytes: size, Metric: parsers.MetricBandwidth, N: 3, Mean: bw, Min: bw * 0.8, Max: bw * 1.2}}}
	}
	r := &schema.Report{SchemaVersion: schema.Version, Run: fixture.BaseMeta("x"), Results: []schema.Result{leg(65536, 5e9), leg(1<<20, 9e9)}}
	for _, c := range chartsOf(r) {
		for _, s := range optionOf(t, c.Option)["series"].([]any) {
			s := s.(map[string]any)
			if s["name"] != "spread of a-0 → b-0" {
				continue
			}
			spans := s["data"].([]any)
			if len(spans) != 2 || spans[0].(map[string]any)["value"] != 2.0 || spans[1].(map[string]any)["value"] != 3.6 {
				t.Errorf("band spans %v, want 2 and 3.6 Gb/s (0.4 × the mean at each size)", spans)
			}
			return
		}
	}
	t.Fatal("no band")
}

// The pair chart's sizes are those of the curves the heatmap carries,
// even when a pair the heatmap cannot draw measured another size.
func TestPairChartSizesAreThePayloads(t *testing.T) {
	r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	x := &r.Results[0]
	x.Verdict = schema.VerdictSkipped // no cell; its extra size must not shift the others
	bw := 1e9
	x.Samples = append([]parsers.Sample{{Bytes: 4 << 10, BWAvgBps: &bw}}, x.Samples...)
	heat, pair := heatmapOf(t, r)
	var p matrixPayload
	if err := json.Unmarshal([]byte(heat.Matrix), &p); err != nil {
		t.Fatal(err)
	}
	axis := optionOf(t, pair.Option)["xAxis"].([]any)[0].(map[string]any)["data"].([]any)
	if len(axis) != 3 || len(p.Sizes) != 3 || axis[0] != p.Sizes[0] {
		t.Errorf("pair chart's sizes %v, the curves' %v", axis, p.Sizes)
	}
}

// Without a line rate the heatmap is of the best pair, not empty; a pair
// that measured nothing is a 0 % cell, not a blank one; a low pair's
// retest does not repaint its matrix cell.
func TestMatrixCellsWithoutLineRateDeadLinksAndRetests(t *testing.T) {
	r := fixture.Matrix(4, []int64{1 << 20})
	for i := range r.Results {
		r.Results[i].Efficiency, r.Results[i].LineRate = nil, nil
	}
	heat, _ := heatmapOf(t, r)
	if n := len(heatCells(t, heat)); n != 12 || !strings.Contains(heat.Title, "% of the best pair") || !strings.Contains(heat.Matrix, `"of":"the best pair"`) {
		t.Errorf("%d cells, title %q, payload %.80s", n, heat.Title, heat.Matrix)
	}

	r = fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	dead := &r.Results[4]
	dead.BestBps, dead.Efficiency, dead.Verdict = 0, nil, schema.VerdictFail
	retest := r.Results[5]
	retest.Retest, retest.BestBps = 1, 1
	eff := 0.1
	retest.Efficiency = &eff
	r.Results = append(r.Results, retest)
	heat, _ = heatmapOf(t, r)
	cells := heatCells(t, heat)
	zero := 0
	for _, c := range cells {
		if c.(map[string]any)["value"].([]any)[2] == 0.0 {
			zero++
		}
	}
	if len(cells) != 12 || zero != 1 {
		t.Errorf("%d cells, %d at 0 %%: want 12 with the dead link at 0 %% and the retest not drawn", len(cells), zero)
	}
}

// Non-finite figures (hand-made input) lose their cell or point, never
// the chart.
func TestNonFiniteFiguresKeepThePage(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
		r.Results[2].Efficiency = &v
		bad := v
		r.Results[1].Samples[0].BWAvgBps = &bad
		heat, _ := heatmapOf(t, r)
		if n := len(heatCells(t, heat)); n != 11 || heat.Matrix == "null" {
			t.Errorf("%v: %d cells, payload %.40s", v, n, heat.Matrix)
		}
		var page strings.Builder
		if err := Write(&page, r, Options{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(page.String(), "option: ,") || strings.Contains(page.String(), "option: }") {
			t.Errorf("%v: an empty chart option in the page's script", v)
		}
	}
}

// No name in a report can end or confuse the page's script element.
func TestScriptSafe(t *testing.T) {
	for in, want := range map[string]string{
		`["a</script>"]`:    `["a\u003c/script>"]`,
		`["<!--<SCRIPT>x"]`: `["\u003c!--\u003cSCRIPT>x"]`,
		`["a<b","<br/>"]`:   `["a<b","<br/>"]`,
		`{"x":"<scrip"}`:    `{"x":"<scrip"}`,
		`"<!-"`:             `"<!-"`,
		`"ends with <"`:     `"ends with <"`,
		`"<script"`:         `"\u003cscript"`,
	} {
		if got := scriptSafe(in); got != want {
			t.Errorf("scriptSafe(%s) = %s, want %s", in, got, want)
		}
	}
	r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	for i := range r.Results {
		if r.Results[i].From == "ep-1" {
			r.Results[i].From = "<!--<script>"
		}
	}
	var page strings.Builder
	if err := Write(&page, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "<!--<script>") {
		t.Error("the name reached the page unescaped")
	}
}
