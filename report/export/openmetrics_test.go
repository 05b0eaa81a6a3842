package export

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

func openMetricsOf(t *testing.T, r *schema.Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteOpenMetrics(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// findMetric returns the value of the family's sample whose labels include want.
func findMetric(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no family %s", name)
	}
	if f.GetType() != dto.MetricType_GAUGE {
		t.Errorf("%s is %v, want gauge", name, f.GetType())
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("%s: no sample with %v", name, want)
	return 0
}

func TestOpenMetricsParsesAndHoldsTheFigures(t *testing.T) {
	r := fixture.Full(1)
	r.Run.Fingerprint["odd.key"] = "a \"quoted\" \\ value\nwith a newline"
	text := openMetricsOf(t, r)
	strictOpenMetrics(t, text)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus text parser: %v\n%s", err, text[:min(len(text), 2000)])
	}
	if v := findMetric(t, fams, "rdmabench_run_info", map[string]string{"scenario": "pd-disagg", "nic_firmware": "28.43.1014",
		"kernel": "5.14.0-503.el9.x86_64", "odd_key": "a \"quoted\" \\ value\nwith a newline"}); v != 1 {
		t.Errorf("run_info %g", v)
	}
	// Every result's verdict, and the figures of one, as report.json has them.
	if n := len(fams["rdmabench_result_verdict"].Metric); n != len(r.Results) {
		t.Errorf("%d verdict series for %d results", n, len(r.Results))
	}
	var res *schema.Result
	for i := range r.Results {
		if r.Results[i].Tool == "ib_write_bw" && r.Results[i].BestBps > 0 && r.Results[i].Efficiency != nil {
			res = &r.Results[i]
			break
		}
	}
	id := map[string]string{"test": res.Test, "from": res.From, "to": res.To, "tool": "ib_write_bw"}
	if v := findMetric(t, fams, "rdmabench_best_bandwidth_bits_per_second", id); v != res.BestBps {
		t.Errorf("best %g, want %g", v, res.BestBps)
	}
	if v := findMetric(t, fams, "rdmabench_line_rate_bits_per_second", id); v != 400e9 {
		t.Errorf("line rate %g", v)
	}
	if v := findMetric(t, fams, "rdmabench_line_rate_ratio", id); v != *res.Efficiency/100 {
		t.Errorf("ratio %g, want %g", v, *res.Efficiency/100)
	}
	s := res.Samples[len(res.Samples)-1]
	id["size"] = itoa(s.Bytes)
	if v := findMetric(t, fams, "rdmabench_bandwidth_bits_per_second", id); v != *s.BWAvgBps {
		t.Errorf("bandwidth %g, want %g", v, *s.BWAvgBps)
	}
	if v := findMetric(t, fams, "rdmabench_result_verdict", map[string]string{"test": res.Test, "from": res.From, "to": res.To,
		"verdict": res.Verdict, "transport": "RDMA"}); v != 1 {
		t.Errorf("verdict %g", v)
	}
	sum := schema.CountVerdicts(r.Results)
	if v := findMetric(t, fams, "rdmabench_run_results", map[string]string{"verdict": "fail"}); v != float64(sum.Fail) || sum.Fail == 0 {
		t.Errorf("fail count %g, want %d", v, sum.Fail)
	}
	for _, lat := range r.Results {
		if lat.Tool == "ib_send_lat" || strings.HasSuffix(lat.Tool, "_lat") {
			ls := lat.Samples[0]
			if v := findMetric(t, fams, "rdmabench_latency_seconds", map[string]string{"test": lat.Test, "size": itoa(ls.Bytes)}); v != *ls.LatAvgUS/1e6 {
				t.Errorf("latency %g s, want %g µs", v, *ls.LatAvgUS)
			}
			break
		}
	}
}

var (
	omName   = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	omSample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\} (\S+)$`)
)

// strictOpenMetrics checks what the Prometheus parser forgives: # EOF last
// and once, HELP then TYPE before each family's samples, families
// contiguous and unique, no duplicate series, base-unit names.
func strictOpenMetrics(t *testing.T, text string) {
	t.Helper()
	if !strings.HasSuffix(text, "\n# EOF\n") || strings.Count(text, "# EOF") != 1 {
		t.Fatal("does not end with a single # EOF line")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n# EOF\n"), "\n")
	seenFam, seenSeries := map[string]bool{}, map[string]bool{}
	cur, state := "", ""
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "# HELP "):
			name := strings.Fields(l)[2]
			if seenFam[name] || !omName.MatchString(name) {
				t.Fatalf("line %d: family %s repeated or badly named", i+1, name)
			}
			seenFam[name], cur, state = true, name, "help"
		case strings.HasPrefix(l, "# TYPE "):
			if f := strings.Fields(l); state != "help" || f[2] != cur || f[3] != "gauge" {
				t.Fatalf("line %d: TYPE without HELP, or not a gauge: %s", i+1, l)
			}
			state = "type"
		default:
			m := omSample.FindStringSubmatch(l)
			if m == nil || m[1] != cur || state == "help" {
				t.Fatalf("line %d: not a sample of %s: %q", i+1, cur, l)
			}
			if seenSeries[m[1]+m[2]] {
				t.Fatalf("line %d: duplicate series %q", i+1, l)
			}
			seenSeries[m[1]+m[2]] = true
		}
	}
	for _, f := range OpenMetricsFamilies {
		if !strings.HasSuffix(f.Name, "_seconds") && !strings.HasSuffix(f.Name, "_bits_per_second") && !strings.HasSuffix(f.Name, "_ratio") &&
			!strings.HasSuffix(f.Name, "_info") && !strings.HasSuffix(f.Name, "_results") && !strings.HasSuffix(f.Name, "_verdict") {
			t.Errorf("%s: not in a base unit", f.Name)
		}
	}
}

func TestOpenMetricsEscapesLabels(t *testing.T) {
	if got := escapeLabelValue("a\\b\"c\nd"); got != `a\\b\"c\nd` {
		t.Errorf("%q", got)
	}
	if got := labelName("9nic.fw-ver"); got != "_nic_fw_ver" {
		t.Errorf("%q", got)
	}
}

// A low pair's rerun is a series of its own, not a duplicate of its
// matrix leg (which Prometheus rejects).
func TestOpenMetricsRetestIsItsOwnSeries(t *testing.T) {
	r := fixture.Full(1)
	var leg *schema.Result
	for i := range r.Results {
		if r.Results[i].Test == "fabric-a2a" {
			leg = &r.Results[i]
			break
		}
	}
	if leg == nil {
		t.Fatal("fixture has no matrix leg")
	}
	re := *leg
	re.Retest = 1
	r.Results = append(r.Results, re)
	text := openMetricsOf(t, r)
	strictOpenMetrics(t, text)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	findMetric(t, fams, "rdmabench_best_bandwidth_bits_per_second", map[string]string{"test": "fabric-a2a", "retest": "1"})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// With a serving section, the KV budget is exported: per source and
// context length, what one request's transfer adds to TTFT, in seconds.
func TestOpenMetricsKVBudget(t *testing.T) {
	r := fixture.Full(1)
	r.Serving = &schema.ServingSetup{Layers: 61, LatentDim: 576, KVDtype: "bf16", DtypeBytes: 2, ContextLengths: []int{1000}, PrefillTP: 8, DecodeTP: 4, BlockTokens: 16}
	r.KVBudget = nil
	text := openMetricsOf(t, r)
	strictOpenMetrics(t, text)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	m := findMetric(t, fams, "rdmabench_kv_transfer_ttft_seconds", map[string]string{"source": "line rate", "context_tokens": "1000"})
	// 1000 tokens × 70272 bytes over the fixture's 400 Gb/s line rate.
	if got := m; got < 0.0014 || got > 0.0015 {
		t.Errorf("line rate, 1000 tokens: %g s", got)
	}
}

// The EP budget: per DeepEP test and stage, seconds added per output
// token (decode) and per prefill pass, from the real 4×H100 run.
func TestOpenMetricsEPBudget(t *testing.T) {
	text := openMetricsOf(t, fixture.DeepEP())
	strictOpenMetrics(t, text)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for stage, want := range map[string]float64{"decode": 0.0059218, "prefill": 1045.38 * 58 / 1e6} {
		m := findMetric(t, fams, "rdmabench_ep_budget_seconds", map[string]string{"test": "deepep-fp8", "stage": stage, "moe_layers": "58"})
		if math.Abs(m-want) > 1e-9 {
			t.Errorf("%s: %g s, want %g", stage, m, want)
		}
	}
}
