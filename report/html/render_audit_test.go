package html

// Found by a fresh-eyes audit of the report at scale; the helpers decode
// the page's payload as its JavaScript does.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// jsPairCurve decodes one cell's curve exactly as html.tmpl's pairCurve
// does: u = bytes[o] | bytes[o+1]<<8; 65535 → "-";
// Math.round(u / 65534 * scale * 100) / 100.
func jsPairCurve(t *testing.T, p matrixPayload, cell int) []any {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(p.Curves)
	if err != nil {
		t.Fatal(err)
	}
	n := len(p.Sizes)
	var out []any
	for k := 0; k < n; k++ {
		o := 2 * (cell*n + k)
		u := int(b[o]) | int(b[o+1])<<8
		if u == 65535 {
			out = append(out, "-")
			continue
		}
		// Math.round rounds half up (towards +Inf): floor(x + 0.5).
		out = append(out, math.Floor(float64(u)/65534*p.Scale*100+0.5)/100)
	}
	return out
}

func payloadOf(t *testing.T, heat chartSpec) matrixPayload {
	t.Helper()
	var p matrixPayload
	if err := json.Unmarshal([]byte(heat.Matrix), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A pair whose leg failed outright (verdict error, no samples: what
// judge.Fill leaves when no repetition measured) is the reddest cell, not
// a blank one indistinguishable from a pair a sampled matrix did not run.
func TestMatrixDeadPairWithoutSamplesHasACell(t *testing.T) {
	r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	dead := &r.Results[4] // ep-1 → ep-2
	dead.Samples, dead.Stats, dead.Repetitions = nil, nil, nil
	dead.BestBps, dead.BestBytes, dead.Efficiency = 0, 0, nil
	dead.Verdict, dead.ErrorClass, dead.Reason = schema.VerdictError, parsers.ClassToolError, "connection refused"
	heat, _ := heatmapOf(t, r)
	cells := heatCells(t, heat)
	p := payloadOf(t, heat)
	found := false
	for i, c := range cells {
		v := c.(map[string]any)["value"].([]any)
		if p.Endpoints[int(v[1].(float64))] != dead.From || p.Endpoints[int(v[0].(float64))] != dead.To {
			continue
		}
		found = true
		if v[2].(float64) != 0 {
			t.Errorf("the dead link's cell: %v %%, want 0", v[2])
		}
		// Its curve, as the page unpacks it on a click: nothing measured.
		for k, x := range jsPairCurve(t, p, i) {
			if x != "-" {
				t.Errorf("the dead link's curve at %s: %v, want \"-\"", p.Sizes[k], x)
			}
		}
	}
	if len(cells) != 12 || !found {
		t.Errorf("%d cells, dead link %s has a cell: %v (want 12 cells, the dead link at 0 %%)", len(cells), dead.Pair(), found)
	}
}

// A name in report.json ("rdmabench report X/report.json --html" renders
// any report.json) is data, never code: optionJSON stripped go-echarts'
// fixed function marker "__f__ anywhere in the option, so an endpoint
// named __f__alert(1)__f__ became a call in the page's script.
func TestMatrixNameCannotBecomeScript(t *testing.T) {
	r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	const evil = "__f__alert(document.domain)__f__"
	for i := range r.Results {
		if r.Results[i].From == "ep-1" {
			r.Results[i].From = evil
		}
		if r.Results[i].To == "ep-1" {
			r.Results[i].To = evil
		}
	}
	var page strings.Builder
	if err := Write(&page, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !ChartsIncluded() {
		t.Skip("needs the ECharts asset (the script is only written with it)")
	}
	s := page.String()
	script := s[strings.LastIndex(s, "<script>"):]
	if i := strings.Index(script, "alert(document.domain)"); i >= 0 && script[i-1] != '_' {
		t.Errorf("the name is code in the page's script: …%s…", script[max(0, i-40):i+40])
	}
}

// "Rows send, columns receive" (docs, heatmap axes). ib_read_bw's client
// (From) reads the server's (To) memory: the data goes To → From, so the
// sender row of a read pair is To (the page put From there for every
// tool).
func TestMatrixReadRowsAreTheSenders(t *testing.T) {
	r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	for i := range r.Results {
		r.Results[i].Tool, r.Results[i].Op = "ib_read_bw", "READ"
	}
	slow := &r.Results[1] // ep-0 → ep-2: ep-0 reads ep-2's memory
	slow.BestBps /= 2
	e := *slow.Efficiency / 2
	slow.Efficiency = &e
	heat, _ := heatmapOf(t, r)
	opt := optionOf(t, heat.Option)
	yName := opt["yAxis"].([]any)[0].(map[string]any)["name"]
	p := payloadOf(t, heat)
	for _, c := range heatCells(t, heat) {
		v := c.(map[string]any)["value"].([]any)
		if v[2].(float64) < 60 {
			row := p.Endpoints[int(v[1].(float64))]
			if yName == "sender" && row != slow.To {
				t.Errorf("the slow read %s (data flows %s → %s) is drawn in the %q row of %s", slow.Pair(), slow.To, slow.From, yName, row)
			}
		}
	}
}

// The heatmap's tooltip is built by the page's own formatter from the
// payload's names, and ECharts writes a formatter's string as HTML
// (innerHTML): hovering a cell must not make a name markup (real
// Chromium).
func TestMatrixTooltipNameIsNotMarkup(t *testing.T) {
	if !ChartsIncluded() {
		t.Skip("needs the ECharts asset")
	}
	b := newBrowser(t, 1366, 1200)
	r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	const evil = `<img src=x onerror="document.documentElement.setAttribute('data-pwned','1')">`
	for i := range r.Results {
		if r.Results[i].From == "ep-1" {
			r.Results[i].From = evil
		}
		if r.Results[i].To == "ep-1" {
			r.Results[i].To = evil
		}
	}
	page := writeHTMLFile(t, t.TempDir(), r)
	b.open(t, page, 30*time.Second)
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`(function () {
  var hm = Array.from(document.querySelectorAll(".chart")).map(function (d) { return echarts.getInstanceByDom(d); })
    .filter(function (c) { return c.getOption().series[0].type === "heatmap"; })[0];
  var data = hm.getOption().series[0].data, E = hm.getOption().xAxis[0].data, cell = -1;
  for (var i = 0; i < data.length; i++) { if (E[data[i].value[1]].indexOf("<img") === 0) { cell = i; } }
  hm.dispatchAction({type: "showTip", seriesIndex: 0, dataIndex: cell});
  return [cell, document.querySelectorAll("img[src=x]").length];
})()`))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.getAttribute("data-pwned") || ""`))
	if err != nil {
		t.Fatal(err)
	}
	if pwned != "" || got[1].(float64) > 0 {
		t.Errorf("hovering cell %v: the endpoint name became an <img> element (%v) and its onerror ran (data-pwned=%q)", got[0], got[1], pwned)
	}
}
