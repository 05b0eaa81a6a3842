package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

func compareFixture(t *testing.T) *Comparison {
	t.Helper()
	base, cur := fixture.BaseAndCurrent()
	return Compare(base, cur, Options{ThresholdPct: 5})
}

func rowsWhere(c *Comparison, test, backend string) []Row {
	var out []Row
	for _, r := range c.Rows {
		if r.Test == test && (backend == "" || r.Backend == backend) {
			out = append(out, r)
		}
	}
	return out
}

func statuses(rows []Row) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[r.Status]++
	}
	return m
}

// Each decision compare must make, on realistic runs.
func TestCompareDecisions(t *testing.T) {
	c := compareFixture(t)
	cases := []struct {
		name, test, backend, pair string
		check                     func(map[string]int) bool
		want                      string
	}{
		{"clear regression", "write-bw", "", "prefill-0 → decode-0",
			func(m map[string]int) bool { return m[StatusRegression] >= 10 && m[StatusImprovement] == 0 }, ">= 10 sizes regressed"},
		{"unchanged pair", "write-bw", "", "prefill-1 → decode-1",
			func(m map[string]int) bool { return m[StatusUnchanged] == 23 }, "all 23 sizes unchanged"},
		{"drop inside the noise", "kv-transfer", "UCCL", "",
			func(m map[string]int) bool { return m[StatusRegression] == 0 && m[StatusNoise] >= 1 }, "no regression, some noise"},
		{"improvement", "kv-transfer", "LIBFABRIC", "",
			func(m map[string]int) bool { return m[StatusImprovement] >= 8 && m[StatusRegression] == 0 }, ">= 8 sizes improved"},
		{"missing result", "read-bw", "", "",
			func(m map[string]int) bool { return m[StatusMissing] == 1 && len(m) == 1 }, "one missing row"},
		{"matrix within threshold", "fabric-a2a", "", "",
			func(m map[string]int) bool { return m[StatusUnchanged] == 112 }, "112 unchanged (56 pairs × 2 sizes)"},
	}
	for _, tc := range cases {
		rows := rowsWhere(c, tc.test, tc.backend)
		if tc.pair != "" {
			var kept []Row
			for _, r := range rows {
				if r.Pair == tc.pair {
					kept = append(kept, r)
				}
			}
			rows = kept
		}
		if m := statuses(rows); !tc.check(m) {
			t.Errorf("%s: statuses %v, want %s", tc.name, m, tc.want)
		}
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), `nic.firmware was "28.43.1014", now "28.44.1036"`) {
		t.Errorf("changed fingerprint not warned: %v", c.Warnings)
	}
	for _, r := range rowsWhere(c, "read-bw", "") {
		if !r.Lost || !r.Fails() {
			t.Errorf("read-bw measured in the baseline and missing now must fail CI: %+v", r)
		}
	}
	if c.Regressions() != c.Counts[StatusRegression]+1 || c.Lost() != 1 {
		t.Errorf("regressions %d (lost %d), want the %d regression rows + 1 missing result", c.Regressions(), c.Lost(), c.Counts[StatusRegression])
	}
}

// A tool that reports another version is named, as a changed fingerprint
// is; a tool that ran in one run only is not.
func TestCompareToolVersions(t *testing.T) {
	base, cur := fixture.Full(1), fixture.Full(1)
	cur.Run.ID = "run-2"
	base.Run.ToolVersions = map[string]string{"ucx_perftest": "1.13.1", "perftest": "6.22", "nixlbench": "0.7.1"}
	cur.Run.ToolVersions = map[string]string{"ucx_perftest": "1.19.0", "perftest": "6.22", "iperf3": "3.12"}
	c := Compare(base, cur, Options{ThresholdPct: 5})
	want := []string{`tool version differs: ucx_perftest was "1.13.1", now "1.19.0"`}
	if fmt.Sprint(c.Warnings) != fmt.Sprint(want) {
		t.Errorf("warnings %q, want %q", c.Warnings, want)
	}
}

// A run cut short must not pass against the last good run (and so become
// the next baseline): every result it lost fails, and it is named.
func TestCompareInterruptedRunFails(t *testing.T) {
	base := fixture.Full(1)
	cur := fixture.Full(1)
	cur.Results, cur.Run.Interrupted, cur.Run.Error = nil, true, "interrupted"
	c := Compare(base, cur, Options{ThresholdPct: 5})
	if c.Counts[StatusMissing] != len(base.Results) {
		t.Fatalf("counts %v, want %d missing", c.Counts, len(base.Results))
	}
	measured := 0
	for i := range base.Results {
		if len(Estimates(&base.Results[i], base.Results[i].Metric)) > 0 {
			measured++
		}
	}
	if measured == 0 || measured == len(base.Results) || c.Regressions() != measured || c.Lost() != measured {
		t.Errorf("regressions %d, lost %d; want the %d of %d baseline results that measured", c.Regressions(), c.Lost(), measured, len(base.Results))
	}
	w := strings.Join(c.Warnings, "\n")
	if !strings.Contains(w, "current run run-1 was interrupted after 0 result(s)") || !strings.Contains(w, "ended with an error: interrupted") {
		t.Errorf("warnings %q", w)
	}
	err := &RegressionError{N: c.Regressions(), Missing: c.Lost()}
	if want := fmt.Sprintf("%d result(s) measured in the baseline missing now", measured); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestCompareSameRunHasNoRegression(t *testing.T) {
	r := fixture.Full(1)
	c := Compare(r, r, Options{ThresholdPct: 5})
	if c.Regressions() != 0 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "the same run") {
		t.Fatalf("self-compare: %v, warnings %v", c.Counts, c.Warnings)
	}
	if c.Counts[StatusUnchanged] == 0 {
		t.Fatal("no rows compared")
	}
}

// A result that errors now where it measured before is a regression.
func TestCompareBroken(t *testing.T) {
	base := fixture.Full(1)
	cur := fixture.Full(1)
	for i := range cur.Results {
		if cur.Results[i].Test == "read-bw" {
			cur.Results[i].Samples, cur.Results[i].Stats, cur.Results[i].Repetitions = nil, nil, nil
			cur.Results[i].Verdict, cur.Results[i].Reason = schema.VerdictError, "connection refused"
		}
	}
	c := Compare(base, cur, Options{ThresholdPct: 5})
	if c.Counts[StatusBroken] != 1 || c.Regressions() != 1 {
		t.Fatalf("counts %v", c.Counts)
	}
}

// Latency: higher is worse.
func TestClassifyLatency(t *testing.T) {
	row := Row{Baseline: &Estimate{Mean: 2, N: 1}, Current: &Estimate{Mean: 2.6, N: 1}}
	classify(&row, Options{ThresholdPct: 5, Alpha: 0.05}, true)
	if row.Status != StatusRegression {
		t.Fatalf("latency +30%% (one repetition, beyond 25%%) = %s", row.Status)
	}
	row = Row{Baseline: &Estimate{Mean: 2, N: 1}, Current: &Estimate{Mean: 2.4, N: 1}}
	classify(&row, Options{ThresholdPct: 5, Alpha: 0.05}, true)
	if row.Status != StatusNoise {
		t.Fatalf("latency +20%% (one repetition) = %s, want noise", row.Status)
	}
	row = Row{Baseline: &Estimate{Mean: 2, Stddev: 0.01, N: 3}, Current: &Estimate{Mean: 1.6, Stddev: 0.01, N: 3}}
	classify(&row, Options{ThresholdPct: 5, Alpha: 0.05}, true)
	if row.Status != StatusImprovement || row.PValue == nil || *row.PValue > 0.001 {
		t.Fatalf("latency −20%% = %s p=%v", row.Status, row.PValue)
	}
}

func TestWelch(t *testing.T) {
	// Two samples of 3 with sd 1, means 10 and 8: t = 2/sqrt(2/3) = 2.449, df = 4,
	// one-sided p = 0.0353 (R: pt(2.449, 4, lower.tail=FALSE)).
	p := welchOneSided(&Estimate{Mean: 10, Stddev: 1, N: 3}, &Estimate{Mean: 8, Stddev: 1, N: 3}, true)
	if p < 0.035 || p > 0.036 {
		t.Fatalf("p = %v, want 0.0353", p)
	}
}

func TestCompareGolden(t *testing.T) {
	c := compareFixture(t)
	var buf bytes.Buffer
	if err := WriteTable(&buf, c); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "compare.txt", buf.Bytes())
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "compare-golden.json", append(data, '\n'))
}

func TestRegressionErrorExitCode(t *testing.T) {
	var err error = &RegressionError{N: 3}
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 1 {
		t.Fatal("RegressionError must exit 1")
	}
}

// A result that errored in the baseline and measures now is new, not lost.
func TestCompareFixed(t *testing.T) {
	base, cur := fixture.Full(1), fixture.Full(1)
	for i := range base.Results {
		if base.Results[i].Test == "read-bw" {
			base.Results[i].Samples, base.Results[i].Stats, base.Results[i].Repetitions = nil, nil, nil
			base.Results[i].Verdict, base.Results[i].Reason = schema.VerdictError, "connection refused"
		}
	}
	c := Compare(base, cur, Options{ThresholdPct: 5})
	rows := rowsWhere(c, "read-bw", "")
	if len(rows) != 1 || rows[0].Status != StatusNew || !strings.Contains(rows[0].Note, "baseline had error: connection refused") {
		t.Fatalf("rows %+v", rows)
	}
	if c.Regressions() != 0 {
		t.Fatal("a fixed result is not a regression")
	}
}

// A node that slowed down on every pair reads as one line per pair in the
// table, not one per pair and size.
func TestCompareTableFoldsLargeRegression(t *testing.T) {
	base, cur := fixture.BigMatrix(), fixture.BigMatrix()
	cur.Run.ID = "run-a2a-64-next"
	for i := range cur.Results {
		r := &cur.Results[i]
		if r.From != "ep-5" {
			continue
		}
		for j := range r.Samples {
			v := *r.Samples[j].BWAvgBps * 0.7 // beyond 25%: one repetition per side
			r.Samples[j].BWAvgBps = &v
		}
	}
	c := Compare(base, cur, Options{ThresholdPct: 5})
	if c.Counts[StatusRegression] != 63*12 {
		t.Fatalf("regressions %d, want 756 (63 pairs × 12 sizes)", c.Counts[StatusRegression])
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(buf.String(), "\n")
	if lines > 75 || strings.Count(buf.String(), "(+11 more sizes)") != 63 {
		t.Fatalf("%d lines:\n%s", lines, buf.String())
	}
}

// A test skipped now and absent from the baseline (the automatic baseline
// holds only results that passed: skipped in every run) is nothing to
// compare, as a result measured in neither run is: not "new".
func TestSkippedNowAndNotInTheBaselineIsNotNew(t *testing.T) {
	base, cur := fixture.BaseAndCurrent()
	cur.Results = append(cur.Results, schema.Result{Test: "rping", Tool: "rping", Verdict: schema.VerdictSkipped, Reason: "no RDMA device"})
	c := Compare(base, cur, Options{ThresholdPct: 5})
	if rows := rowsWhere(c, "rping", ""); len(rows) != 0 {
		t.Errorf("rows for a test skipped now and not in the baseline: %+v", rows)
	}
}
