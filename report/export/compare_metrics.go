package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/report/compare"
)

// CompareOpenMetricsFamilies documents every metric WriteCompareOpenMetrics
// writes, in the order it writes them (the nightly guide's table and the
// dashboard's test are checked against it). They are compare's verdicts,
// not a second judgement: the regression rule is compare.Rule's alone.
var CompareOpenMetricsFamilies = []struct{ Name, Help string }{
	{"rdmabench_compare_info", "A comparison's baseline and current run ids, threshold and alpha; the value is always 1."},
	{"rdmabench_compare_regressions", "Rows that fail the comparison (regression, broken, or measured in the baseline and missing now): compare exits 1 when above 0."},
	{"rdmabench_compare_rows", "Rows of the comparison per status (regression, broken, missing, noise, new, improvement, unchanged)."},
	{"rdmabench_compare_status", "One series per compared result and size with compare's status as a label (fails=true where it fails CI); the value is always 1."},
	{"rdmabench_compare_change_ratio", "A compared figure's current mean over its baseline mean (0.8 = 20% lower; latency: higher is worse)."},
	{"rdmabench_compare_p_value", "The one-sided Welch t-test's p-value of a change, where both runs repeated that size."},
}

// compareStatuses are the statuses rdmabench_compare_rows always carries,
// in compare's order (what fails CI first), 0 included, so that a status
// that vanishes drops to 0 rather than going stale.
var compareStatuses = []string{compare.StatusBroken, compare.StatusRegression, compare.StatusMissing, compare.StatusNoise,
	compare.StatusNew, compare.StatusImprovement, compare.StatusUnchanged}

// WriteCompareOpenMetrics writes a comparison's verdicts in the OpenMetrics
// text format, every family a gauge, ending with "# EOF", as
// WriteOpenMetrics does for a run. scenario is the compared runs'
// scenario (a Comparison does not carry it): every series has it as a label.
func WriteCompareOpenMetrics(w io.Writer, c *compare.Comparison, scenario string) error {
	fams := map[string]*metricFamily{}
	for _, f := range CompareOpenMetricsFamilies {
		fams[f.Name] = &metricFamily{name: f.Name, help: f.Help}
	}
	add := func(name string, v float64, labels ...[2]string) {
		fams[name].samples = append(fams[name].samples, metricSample{labels: labels, value: v})
	}
	scen := [2]string{"scenario", scenario}
	add("rdmabench_compare_info", 1, scen, [2]string{"baseline_run_id", c.Baseline.ID}, [2]string{"current_run_id", c.Current.ID},
		[2]string{"threshold_pct", formatMetricValue(c.ThresholdPct)}, [2]string{"alpha", formatMetricValue(c.Alpha)})
	add("rdmabench_compare_regressions", float64(c.Regressions()), scen)
	for _, s := range compareStatuses {
		add("rdmabench_compare_rows", float64(c.Counts[s]), scen, [2]string{"status", s})
	}
	seen := map[string]int{}
	for i := range c.Rows {
		row := &c.Rows[i]
		id := compareRowLabels(scen, row, seen)
		add("rdmabench_compare_status", 1, append(id, [2]string{"status", row.Status}, [2]string{"fails", strconv.FormatBool(row.Fails())})...)
		if row.Baseline != nil && row.Current != nil && row.Baseline.Mean != 0 {
			add("rdmabench_compare_change_ratio", row.Current.Mean/row.Baseline.Mean, id...)
		}
		if row.PValue != nil {
			add("rdmabench_compare_p_value", *row.PValue, id...)
		}
	}
	return writeFamilies(w, CompareOpenMetricsFamilies, fams)
}

// compareRowLabels identify a row: scenario, test, pair, tool, backend, op,
// variant, metric and size ("" for a whole result: missing, broken, new).
// A row whose labels an earlier row had (a pair measured twice) gets
// repeat="2", "3"…, so that no two series are the same.
func compareRowLabels(scen [2]string, row *compare.Row, seen map[string]int) [][2]string {
	size := ""
	if row.Bytes > 0 {
		size = strconv.FormatInt(row.Bytes, 10)
	}
	l := [][2]string{scen, {"test", row.Test}, {"pair", row.Pair}, {"tool", row.Tool}, {"backend", row.Backend},
		{"op", row.Op}, {"variant", row.Variant}, {"metric", string(row.Metric)}, {"size", size}}
	var key strings.Builder
	for _, p := range l {
		key.WriteString(p[1])
		key.WriteByte(0)
	}
	seen[key.String()]++
	if n := seen[key.String()]; n > 1 {
		l = append(l, [2]string{"repeat", strconv.Itoa(n)})
	}
	return l[:len(l):len(l)] // each append by the caller copies
}

// writeFamilies writes the families of list that have samples, each with
// its HELP and TYPE gauge lines, then "# EOF".
func writeFamilies(w io.Writer, list []struct{ Name, Help string }, fams map[string]*metricFamily) error {
	bw := bufio.NewWriter(w)
	for _, f := range list {
		fam := fams[f.Name]
		if len(fam.samples) == 0 {
			continue
		}
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s gauge\n", fam.name, escapeHelp(fam.help), fam.name)
		for _, sm := range fam.samples {
			bw.WriteString(fam.name)
			writeLabels(bw, sm.labels)
			bw.WriteByte(' ')
			bw.WriteString(formatMetricValue(sm.value))
			bw.WriteByte('\n')
		}
	}
	bw.WriteString("# EOF\n")
	return bw.Flush()
}
