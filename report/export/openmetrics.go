package export

import (
	"bufio"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/schema"
)

// OpenMetricsContentType is what a Pushgateway or an HTTP server should
// send the output of WriteOpenMetrics as.
const OpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// metricFamily is one metric name with its HELP text and samples.
type metricFamily struct {
	name, help string
	samples    []metricSample
}

type metricSample struct {
	labels [][2]string
	value  float64
}

// OpenMetricsFamilies documents every metric WriteOpenMetrics writes, in
// the order it writes them (the README's table is checked against it).
var OpenMetricsFamilies = []struct{ Name, Help string }{
	{"rdmabench_run_info", "Run identity and environment fingerprint; the value is always 1."},
	{"rdmabench_run_start_timestamp_seconds", "When the run started, in seconds since the Unix epoch."},
	{"rdmabench_run_results", "Results of the run per verdict (pass, fail, error, skipped, invalid)."},
	{"rdmabench_result_verdict", "One series per result with its verdict as a label; the value is always 1."},
	{"rdmabench_bandwidth_bits_per_second", "Average bandwidth of a result at one message size (nccl: bus bandwidth), in bits per second."},
	{"rdmabench_best_bandwidth_bits_per_second", "A result's headline bandwidth: its best size's average (nccl: best bus bandwidth)."},
	{"rdmabench_latency_seconds", "Average latency of a result at one message size, in seconds."},
	{"rdmabench_line_rate_bits_per_second", "The line rate a result was judged against, in bits per second."},
	{"rdmabench_line_rate_ratio", "A result's headline bandwidth as a fraction of the line rate (0.9 = 90%)."},
	{"rdmabench_kv_transfer_ttft_seconds", "What moving one request's KV cache adds to time-to-first-token, per bandwidth source and context length (the KV budget)."},
	{"rdmabench_ep_budget_seconds", "What DeepEP's dispatch + combine adds per output token (stage decode: TPOT) or per prefill pass (stage prefill: TTFT), over the model's MoE layers at the slowest rank (the EP budget); timed back_to_back (one window, the launch gap counted) or apart (the two phases added)."},
}

// WriteOpenMetrics writes a run's figures in the OpenMetrics text format
// (every family a gauge, so that Prometheus' text format parser and
// node_exporter's textfile collector read it too), ending with "# EOF".
// Metric and label names are stable: the README lists them.
func WriteOpenMetrics(w io.Writer, r *schema.Report) error {
	fams := map[string]*metricFamily{}
	for _, f := range OpenMetricsFamilies {
		fams[f.Name] = &metricFamily{name: f.Name, help: f.Help}
	}
	add := func(name string, v float64, labels ...[2]string) {
		fams[name].samples = append(fams[name].samples, metricSample{labels: labels, value: v})
	}
	scen := [2]string{"scenario", r.Run.Scenario}
	info := [][2]string{scen, {"run_id", r.Run.ID}, {"scenario_hash", r.Run.ScenarioHash}, {"backend", r.Run.Backend},
		{"version", r.Run.Version}}
	for _, k := range sortedKeys(r.Run.Fingerprint) {
		name := labelName(k)
		if name == "scenario" || name == "run_id" || name == "scenario_hash" || name == "backend" || name == "version" {
			name = "fingerprint_" + name
		}
		info = append(info, [2]string{name, r.Run.Fingerprint[k]})
	}
	add("rdmabench_run_info", 1, info...)
	add("rdmabench_run_start_timestamp_seconds", float64(r.Run.Start.UnixNano())/1e9, scen, [2]string{"run_id", r.Run.ID})
	s := schema.CountVerdicts(r.Results)
	for _, v := range []struct {
		name string
		n    int
	}{{schema.VerdictPass, s.Pass}, {schema.VerdictFail, s.Fail}, {schema.VerdictError, s.Error}, {schema.VerdictSkipped, s.Skipped}, {schema.VerdictInvalid, s.Invalid}} {
		add("rdmabench_run_results", float64(v.n), scen, [2]string{"verdict", v.name})
	}
	m, keys := compare.IndexResults(r.Results)
	for _, k := range keys {
		res := m[k]
		id := slices.Clip(resultLabels(r, res, k)) // each append below copies
		add("rdmabench_result_verdict", 1, append(id, [2]string{"transport", res.TransportLabel()}, [2]string{"verdict", res.Verdict})...)
		for _, sm := range res.Samples {
			row := sampleLabels(id, &sm)
			if v, ok := parsers.Figure(parsers.MetricBusBW, &sm); ok {
				add("rdmabench_bandwidth_bits_per_second", v, row...)
			} else if v, ok := parsers.Figure(parsers.MetricBandwidth, &sm); ok {
				add("rdmabench_bandwidth_bits_per_second", v, row...)
			}
			if v, ok := parsers.Figure(parsers.MetricLatency, &sm); ok {
				add("rdmabench_latency_seconds", v/1e6, row...)
			}
		}
		if res.BestBps > 0 {
			add("rdmabench_best_bandwidth_bits_per_second", res.BestBps, id...)
		}
		if lr := res.LineRateBps(&r.Run); lr > 0 {
			add("rdmabench_line_rate_bits_per_second", lr, id...)
		}
		if res.Efficiency != nil {
			add("rdmabench_line_rate_ratio", *res.Efficiency/100, id...)
		}
	}
	addKVBudget(r, scen, add)
	addEPBudget(r, scen, add)
	return writeFamilies(w, OpenMetricsFamilies, fams)
}

// resultLabels identify a result: scenario, test, tool, from, to, backend,
// op, variant, retest for a low pair's rerun, and repeat when a run measured the same key twice.
func resultLabels(r *schema.Report, res *schema.Result, key string) [][2]string {
	from, to := res.From, res.To
	if from == "" && to == "" && len(res.Ranks) > 0 {
		from = res.RankLabel()
	}
	l := [][2]string{{"scenario", r.Run.Scenario}, {"test", res.Test}, {"tool", res.Tool}, {"from", from}, {"to", to},
		{"backend", res.Backend}, {"op", res.Op}, {"variant", res.Variant}}
	if res.Retest > 0 { // a low pair's rerun: else the same series as its matrix leg
		l = append(l, [2]string{"retest", strconv.Itoa(res.Retest)})
	}
	if i := strings.LastIndex(key, "\x00#"); i >= 0 {
		l = append(l, [2]string{"repeat", key[i+2:]})
	}
	return l
}

func writeLabels(w *bufio.Writer, labels [][2]string) {
	w.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(l[0])
		w.WriteString(`="`)
		w.WriteString(escapeLabelValue(l[1]))
		w.WriteByte('"')
	}
	w.WriteByte('}')
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// escapeLabelValue escapes a label value as both text formats require.
func escapeLabelValue(s string) string { return labelEscaper.Replace(s) }

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// labelName turns a fingerprint key ("nic.firmware") into a label name
// ("nic_firmware"): letters, digits and underscores, not starting with a digit.
func labelName(k string) string {
	b := []byte(k)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			b[i] = '_'
		}
	}
	return string(b)
}

func formatMetricValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addKVBudget adds the KV budget's costs: per source (nixlbench per backend
// at the worst pair, the best ib_write_bw, the line rate) and context
// length, what one request's transfer adds to TTFT. A measured source's
// length that no result measured is left out.
func addKVBudget(r *schema.Report, scen [2]string, add func(string, float64, ...[2]string)) {
	b := schema.KVBudgetOf(r)
	if b == nil {
		return
	}
	for _, row := range b.Rows {
		for _, c := range row.Costs {
			if c.Missing {
				continue
			}
			add("rdmabench_kv_transfer_ttft_seconds", c.TTFTms/1000, scen, [2]string{"source", row.Source}, [2]string{"backend", row.Backend},
				[2]string{"test", row.Test}, [2]string{"context_tokens", strconv.Itoa(c.Tokens)})
		}
	}
}

// sampleLabels are a sample's series labels: the result's, its size, and
// where the tool reports per rank and phase (the DeepEP probe) those, so
// that ranks that moved the same bytes are series of their own.
func sampleLabels(id [][2]string, sm *parsers.Sample) [][2]string {
	row := append(id, [2]string{"size", strconv.FormatInt(sm.Bytes, 10)}) // id is clipped: this copies
	if sm.Phase != "" {
		row = append(row, [2]string{"phase", sm.Phase})
	}
	if sm.Rank != nil {
		row = append(row, [2]string{"rank", strconv.Itoa(*sm.Rank)})
	}
	return slices.Clip(row)
}

// addEPBudget adds the EP budget: per DeepEP test and stage, what the
// expert all-to-all adds per output token (decode) or prefill pass.
func addEPBudget(r *schema.Report, scen [2]string, add func(string, float64, ...[2]string)) {
	b := schema.EPBudgetOf(r)
	if b == nil {
		return
	}
	for _, c := range b.Rows {
		// timed says how the layer was timed: a series that moves from apart
		// to back_to_back changed method, not fabric.
		timed := "apart"
		if c.Pair != nil {
			timed = "back_to_back"
		}
		add("rdmabench_ep_budget_seconds", c.Ms/1000, scen, [2]string{"test", c.Test}, [2]string{"stage", c.Stage},
			[2]string{"kernels", c.Kernels}, [2]string{"tokens", strconv.FormatInt(c.Tokens, 10)}, [2]string{"moe_layers", strconv.Itoa(c.MoELayers)},
			[2]string{"timed", timed})
	}
}
