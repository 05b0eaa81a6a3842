package html

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// chartSpec is one chart of the page: its element id, height, and the
// ECharts option as JSON (built with go-echarts).
type chartSpec struct {
	ID     string
	Title  string
	Note   string
	Height int
	Option string
	// Matrix (a heatmap's): its endpoints, unit and every pair's bandwidth
	// per size, packed (matrixPayload); the page's script draws tooltips
	// from it and, on a click, the cell's pair in PairChart.
	Matrix    string
	PairChart string
	// pairChartFollows: the next chart is this heatmap's pair chart.
	pairChartFollows bool
}

// funcMarker brackets the JavaScript functions of a chart option (jsFunc),
// whose quotes optionJSON removes to make them code. It is this process's
// own, drawn at random: go-echarts' fixed "__f__" would turn a name in
// report.json that holds it ("__f__alert(1)__f__") into code in the page.
var funcMarker = func() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "__rdmabench_fn_" + hex.EncodeToString(b) + "__"
}()

var funcMarkerQuotes = regexp.MustCompile(`"` + funcMarker + `|` + funcMarker + `"`)

// jsFunc is opts.FuncOpts with this process's marker: fn becomes code in
// the option optionJSON writes.
func jsFunc(fn string) types.FuncStr {
	s := strings.TrimSuffix(strings.TrimPrefix(string(opts.FuncOpts(fn)), "__f__"), "__f__")
	return types.FuncStr(funcMarker + s + funcMarker)
}

// optionJSON turns a go-echarts option into JS: function markers (from
// jsFunc) become code, and nothing in it can end or confuse the script
// element (scriptSafe).
func optionJSON(s string) string {
	s = funcMarkerQuotes.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, `\n`, " ")
	return scriptSafe(strings.TrimSpace(s))
}

// Colours: verdicts and transports read the same everywhere.
const (
	colorPass    = "#2e7d32"
	colorFail    = "#c62828"
	colorError   = "#ef6c00"
	colorSkipped = "#757575"
	colorLine    = "#37474f"
)

var seriesPalette = []string{"#1565c0", "#00897b", "#f9a825", "#6a1b9a", "#d84315", "#2e7d32", "#ad1457", "#4e342e", "#0277bd", "#9e9d24"}

func verdictColor(v string) string {
	switch v {
	case schema.VerdictPass:
		return colorPass
	case schema.VerdictFail, schema.VerdictInvalid:
		return colorFail
	case schema.VerdictError:
		return colorError
	}
	return colorSkipped
}

// unitFor is how a family's bandwidth is plotted: divisor and axis unit.
func unitFor(f parsers.Family) (float64, string) { return tool.DisplayUnit(tool.FamilyMetric(f)) }

func round2(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return f
}

// sizeAxis is the sorted union of the sizes of results and their labels.
func sizeAxis(rs []*schema.Result) ([]int64, []string) {
	seen := map[int64]bool{}
	var sizes []int64
	for _, r := range rs {
		for _, s := range r.Samples {
			if !seen[s.Bytes] {
				seen[s.Bytes] = true
				sizes = append(sizes, s.Bytes)
			}
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	labels := make([]string, len(sizes))
	for i, s := range sizes {
		labels[i] = schema.FormatSizeShort(s)
	}
	return sizes, labels
}

// lineValues aligns a result's metric to the size axis ("-" = no point).
func lineValues(r *schema.Result, sizes []int64, pick func(s *sampleRef) (float64, bool), div float64) []opts.LineData {
	at := map[int64]int{}
	for i := range r.Samples {
		at[r.Samples[i].Bytes] = i
	}
	out := make([]opts.LineData, len(sizes))
	for i, sz := range sizes {
		out[i] = opts.LineData{Value: "-"}
		if j, ok := at[sz]; ok {
			if v, ok := pick(&sampleRef{r, j}); ok && finite(v) {
				out[i] = opts.LineData{Value: round2(v / div)}
			}
		}
	}
	return out
}

// sampleRef points at one sample of a result.
type sampleRef struct {
	r *schema.Result
	i int
}

func pickMetric(m parsers.Metric) func(*sampleRef) (float64, bool) {
	return func(s *sampleRef) (float64, bool) { return parsers.Figure(m, &s.r.Samples[s.i]) }
}

// lineRateMark draws the line rate as a horizontal mark line.
func lineRateMark(bps, div float64, unit string) []opts.MarkLineNameYAxisItem {
	if bps <= 0 {
		return nil
	}
	y := round2(bps / div)
	return []opts.MarkLineNameYAxisItem{{Name: fmt.Sprintf("line rate %s %s", strconv.FormatFloat(y, 'f', -1, 64), unit), YAxis: y}}
}

// lineRateAxisMax is the y axis maximum of a chart with a line rate: the
// line rate while every point is below it, else ECharts' own choice (null).
func lineRateAxisMax(y float64) types.FuncStr {
	v := strconv.FormatFloat(y, 'f', -1, 64)
	return jsFunc("function (e) { return e.max < " + v + " ? " + v + " : null; }")
}

// unprogressive turns off ECharts' progressive rendering on every series of
// an option: a 64×64 heatmap would otherwise draw in chunks over several
// frames, and a reader (or the browser test) could see half a matrix.
// go-echarts has no series option for it, so the JSON is patched.
func unprogressive(option string) string {
	return patchOption(option, func(m map[string]any) {
		series, _ := m["series"].([]any)
		for _, s := range series {
			if sm, ok := s.(map[string]any); ok {
				sm["progressive"] = 0
			}
		}
	})
}

// patchOption edits a go-echarts option as JSON, for what its types cannot
// say; an option that does not parse is returned as it was.
func patchOption(option string, patch func(map[string]any)) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(option), &m); err != nil {
		return option
	}
	patch(m)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return option
	}
	return buf.String()
}
