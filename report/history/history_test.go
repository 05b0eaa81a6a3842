package history

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

func seriesNamed(t *testing.T, h *History, test string, bytes int64) *Series {
	t.Helper()
	for _, s := range h.Series {
		if s.Test == test && s.Bytes == bytes {
			return s
		}
	}
	t.Fatalf("no series %s @%d among %d", test, bytes, len(h.Series))
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestHistorySeriesStatsAndStep(t *testing.T) {
	h := Build(fixture.Nightly(20))
	if len(h.Runs) != 20 || len(h.Series) != 3 {
		t.Fatalf("%d runs, %d series (want 20, 3: rping measured nothing)", len(h.Runs), len(h.Series))
	}
	s := seriesNamed(t, h, "write-bw", 1<<20)
	if s.Pair != "a-0 → b-0" || s.Metric != "bw_avg_bps" || s.Op != "WRITE" || len(s.Values) != 20 {
		t.Fatalf("series %+v", s)
	}
	if s.Latest != 303e9 || s.Best != 393e9 || s.Median != 390e9 {
		t.Errorf("latest %g best %g median %g, want 303e9 393e9 390e9", s.Latest, s.Best, s.Median)
	}
	// Run-to-run differences: five of 1, ten of 2, three of 3, one of 93
	// Gb/s: median 2 Gb/s.
	if want := 1.4826 * 2e9 / math.Sqrt2; !near(s.Noise, want) {
		t.Errorf("noise %g, want %g", s.Noise, want)
	}
	if s.LineRateBps != 400e9 || s.Expect != 280e9 {
		t.Errorf("line rate %g, expect %g; want 400e9, 280e9", s.LineRateBps, s.Expect)
	}
	st := s.Step
	if st == nil {
		t.Fatal("no step found")
	}
	// Before: nights 5–11 (median 392); after: nights 12–18 (median 301).
	if st.Index != 12 || st.RunID != "nightly-12" || st.Before != 392e9 || st.After != 301e9 || !near(st.ChangePct, 100*(301.0-392)/392) {
		t.Errorf("step %+v, want index 12 nightly-12 392e9 → 301e9 (−23.2%%)", st)
	}
	if !st.Time.Equal(time.Date(2026, 1, 13, 2, 0, 0, 0, time.UTC)) {
		t.Errorf("step time %v", st.Time)
	}

	steady := seriesNamed(t, h, "write-bw", 64<<10)
	if steady.Step != nil || steady.Best != 201e9 || steady.Latest != 201e9 {
		t.Errorf("steady series: %+v step %+v", steady, steady.Step)
	}
	lat := seriesNamed(t, h, "send-lat", 2)
	if lat.Metric != "lat_avg_us" || lat.Step == nil || lat.Step.Index != 15 || lat.Best != 1.9 || lat.Expect != 5 {
		t.Errorf("latency series: best %g expect %g step %+v", lat.Best, lat.Expect, lat.Step)
	}
	// Worst first: the 1 MiB drop (−23%) before the latency rise (+37%
	// worse) — both steps — then the steady series.
	if h.Series[2] != steady {
		t.Errorf("order: %s, %s, %s", h.Series[0].Name(), h.Series[1].Name(), h.Series[2].Name())
	}
	if len(h.Changes) != 1 || h.Changes[0].Run != 12 || len(h.Changes[0].What) != 1 ||
		h.Changes[0].What[0] != `nic.firmware was "28.43.1014", now "28.44.1000"` {
		t.Errorf("changes %+v", h.Changes)
	}
}

func TestHistoryNoStepWithoutEnoughRunsAfter(t *testing.T) {
	// The drop on night 12 has only nights 12 and 13 after it.
	h := Build(fixture.Nightly(14))
	if s := seriesNamed(t, h, "write-bw", 1<<20); s.Step != nil {
		t.Errorf("step %+v with 2 runs after it", s.Step)
	}
	if h := Build(fixture.Nightly(15)); seriesNamed(t, h, "write-bw", 1<<20).Step == nil {
		t.Error("no step with 3 runs after it")
	}
}

func TestHistoryStepMustStayDown(t *testing.T) {
	// A dip that recovered is not a step.
	xs := []float64{100, 101, 100, 101, 100, 101, 80, 81, 80, 81, 100, 101, 100, 101, 100, 101}
	if i, _, _, ok := findStep(xs, 1, noiseOf(xs, 100, nil), nil); ok {
		t.Errorf("recovered dip reported as a step at %d", i)
	}
	// Two steps: the latest is reported.
	ys := []float64{100, 101, 100, 101, 100, 101, 90, 91, 90, 91, 90, 91, 90, 80, 81, 80, 81, 80, 81}
	if i, before, after, ok := findStep(ys, 1, noiseOf(ys, 90, nil), nil); !ok || i != 13 || before != 90 || after != 80.5 {
		t.Errorf("step at %d (%v): %g → %g, want 13: 90 → 80.5", i, ok, before, after)
	}
}

func TestLoadHistoryFromFolders(t *testing.T) {
	dir := t.TempDir()
	paths, reps := fixture.Nightly(20)
	fixture.WriteRuns(t, dir, paths, reps)
	// Not runs: a folder without report.json, a corrupt one, another schema.
	_ = os.MkdirAll(filepath.Join(dir, "runs", "notes"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "runs", "notes", "x.txt"), []byte("hi"), 0o644)
	_ = os.MkdirAll(filepath.Join(dir, "broken"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "broken", "report.json"), []byte(`{"schemaVersion": "rdmabench.io/report/v1", "run": {"id": 3`), 0o644)
	_ = os.MkdirAll(filepath.Join(dir, "old"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "old", "report.json"), []byte(`{"schemaVersion": "rdmabench.io/report/v0", "run": {}}`), 0o644)
	// report.html beside one run is linked.
	_ = os.WriteFile(filepath.Join(dir, "runs", "nightly-03", "report.html"), []byte("<html>"), 0o644)

	h := Load([]string{filepath.Join(dir, "runs"), filepath.Join(dir, "broken"), filepath.Join(dir, "old"), filepath.Join(dir, "absent")})
	if len(h.Runs) != 20 {
		t.Fatalf("%d runs; warnings %v", len(h.Runs), h.Warnings)
	}
	if len(h.Warnings) != 3 {
		t.Fatalf("warnings %q", h.Warnings)
	}
	for i, want := range []string{"absent", filepath.Join("broken", "report.json") + ": not a report.json", `schemaVersion "rdmabench.io/report/v0"`} {
		if !strings.Contains(strings.Join(h.Warnings, "\n"), want) {
			t.Errorf("warning %d: no %q in %q", i, want, h.Warnings)
		}
	}
	if h.Runs[3].HTML != filepath.Join(dir, "runs", "nightly-03", "report.html") || h.Runs[4].HTML != "" {
		t.Errorf("html links %q %q", h.Runs[3].HTML, h.Runs[4].HTML)
	}
	// The slim, parallel loader builds what Build builds in memory.
	mem := Build(paths, reps)
	for i, s := range h.Series {
		m := mem.Series[i]
		if s.Name() != m.Name() || fmt.Sprint(s.Values) != fmt.Sprint(m.Values) || fmt.Sprint(s.Step) != fmt.Sprint(m.Step) {
			t.Errorf("series %d: %s %v %+v, in memory %s %v %+v", i, s.Name(), s.Values, s.Step, m.Name(), m.Values, m.Step)
		}
	}
}

// History and compare match results the same way: every row compare
// measured on both sides is a series with those two values.
func TestHistoryAgreesWithCompare(t *testing.T) {
	base, cur := fixture.BaseAndCurrent()
	c := compare.Compare(base, cur, compare.Options{ThresholdPct: 5})
	cur.Run.Start = base.Run.Start.Add(24 * time.Hour)
	h := Build([]string{"base/report.json", "cur/report.json"}, []*schema.Report{base, cur})
	n := 0
	for _, row := range c.Rows {
		if row.Baseline == nil || row.Current == nil {
			continue
		}
		n++
		found := false
		for _, s := range h.Series {
			if s.Test == row.Test && s.Backend == row.Backend && s.Op == row.Op && s.Bytes == row.Bytes &&
				(s.Pair == row.Pair || s.Pair+" ["+s.Variant+"]" == row.Pair) && len(s.Values) == 2 &&
				s.Values[0] == row.Baseline.Mean && s.Values[1] == row.Current.Mean {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("compare row %s %s %d: %g → %g has no series", row.Test, row.Pair, row.Bytes, row.Baseline.Mean, row.Current.Mean)
		}
	}
	if n < 10 {
		t.Fatalf("only %d rows compared", n)
	}
}
