package export

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
)

func compareMetricsOf(t *testing.T, c *compare.Comparison, scenario string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCompareOpenMetrics(&buf, c, scenario); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The comparison's verdicts as OpenMetrics: golden (go test ./report/export
// -update rewrites it), strict OpenMetrics, read by Prometheus' parser, and
// the same figures compare's table has.
func TestCompareOpenMetricsGolden(t *testing.T) {
	c := compareFixture(t)
	text := compareMetricsOf(t, c, "pd-disagg")
	fixture.Golden(t, "compare-metrics.txt", []byte(text))
	strictOpenMetrics(t, text)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus text parser: %v", err)
	}
	if v := findMetric(t, fams, "rdmabench_compare_info", map[string]string{"scenario": "pd-disagg",
		"baseline_run_id": "nightly-2026-11-19", "current_run_id": "nightly-2026-11-20", "threshold_pct": "5", "alpha": "0.05"}); v != 1 {
		t.Errorf("compare_info %g", v)
	}
	if v := findMetric(t, fams, "rdmabench_compare_regressions", map[string]string{"scenario": "pd-disagg"}); v != float64(c.Regressions()) || v == 0 {
		t.Errorf("regressions %g, want %d (and some)", v, c.Regressions())
	}
	if n := len(fams["rdmabench_compare_status"].Metric); n != len(c.Rows) {
		t.Errorf("%d status series for %d rows", n, len(c.Rows))
	}
	fails := 0
	for _, m := range fams["rdmabench_compare_status"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "fails" && l.GetValue() == "true" {
				fails++
			}
		}
	}
	if fails != c.Regressions() {
		t.Errorf("%d series with fails=true, want %d", fails, c.Regressions())
	}
	for _, s := range compareStatuses {
		if v := findMetric(t, fams, "rdmabench_compare_rows", map[string]string{"status": s}); v != float64(c.Counts[s]) {
			t.Errorf("rows{status=%s} %g, want %d", s, v, c.Counts[s])
		}
	}
	// The regressed write-bw leg: its change ratio is the table's change.
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.Status != compare.StatusRegression || r.ChangePct == nil || r.Bytes == 0 {
			continue
		}
		want := map[string]string{"test": r.Test, "pair": r.Pair, "size": strconv.FormatInt(r.Bytes, 10), "variant": r.Variant}
		if v := findMetric(t, fams, "rdmabench_compare_change_ratio", want); v < 1+*r.ChangePct/100-1e-9 || v > 1+*r.ChangePct/100+1e-9 {
			t.Errorf("change ratio %g, want %g", v, 1+*r.ChangePct/100)
		}
		findMetric(t, fams, "rdmabench_compare_status", map[string]string{"test": r.Test, "pair": r.Pair, "status": "regression", "fails": "true"})
		break
	}
}

// Two rows with the same labels (a pair measured twice) are two series,
// and label values are escaped.
func TestCompareOpenMetricsRepeatAndEscaping(t *testing.T) {
	row := compare.Row{Test: `odd "test"`, Pair: "a\\b\nc", Tool: "ib_write_bw", Metric: "bw_avg_bps", Bytes: 65536,
		Baseline: &compare.Estimate{Mean: 100, N: 1}, Current: &compare.Estimate{Mean: 50, N: 1}, Status: compare.StatusRegression}
	c := &compare.Comparison{Rows: []compare.Row{row, row}, Counts: map[string]int{compare.StatusRegression: 2}, ThresholdPct: 5, Alpha: 0.05}
	text := compareMetricsOf(t, c, "s")
	strictOpenMetrics(t, text)
	for _, want := range []string{`test="odd \"test\""`, `pair="a\\b\nc"`, `repeat="2"`, `rdmabench_compare_regressions{scenario="s"} 2`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
	if strings.Count(text, "rdmabench_compare_change_ratio{") != 2 || !strings.Contains(text, "} 0.5\n") {
		t.Errorf("want two change ratios of 0.5:\n%s", text)
	}
}

// Every family name is documented once, with the rdmabench_compare_ prefix,
// apart from the run's families.
func TestCompareOpenMetricsFamiliesNamed(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range OpenMetricsFamilies {
		seen[f.Name] = true
	}
	for _, f := range CompareOpenMetricsFamilies {
		if seen[f.Name] || !strings.HasPrefix(f.Name, "rdmabench_compare_") || !omName.MatchString(f.Name) || f.Help == "" {
			t.Errorf("family %q: repeated, badly named or undocumented", f.Name)
		}
		seen[f.Name] = true
	}
}
