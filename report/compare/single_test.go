package compare

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
)

// TestCompareOneRepetition: with one repetition per side the noise is
// unknown: a 20% drop is noise (said so), a 30% drop a regression beyond
// the wider threshold (25% for a 5% threshold), and the note says why.
func TestCompareOneRepetition(t *testing.T) {
	for _, c := range []struct {
		cur    float64
		status string
		note   string
	}{
		{80, StatusNoise, "noise unknown (1 rep.): counts beyond 25%"},
		{70, StatusRegression, "1 rep.: counts beyond 25%"},
		{98, StatusUnchanged, ""},
		{120, StatusImprovement, ""},
	} {
		row := &Row{Baseline: &Estimate{Mean: 100, N: 1}, Current: &Estimate{Mean: c.cur, N: 1}}
		classify(row, Options{ThresholdPct: 5, Alpha: 0.05}, false)
		if row.Status != c.status || !strings.Contains(row.Note, c.note) {
			t.Errorf("100 → %g: %s %q, want %s %q", c.cur, row.Status, row.Note, c.status, c.note)
		}
	}
	if got := SingleRunThresholdPct(10); got != 30 {
		t.Errorf("SingleRunThresholdPct(10) = %g", got)
	}
}

// TestCompareSameRun: a run compared with itself is flagged.
func TestCompareSameRun(t *testing.T) {
	r := fixture.Full(1)
	c := Compare(r, r, Options{ThresholdPct: 5})
	found := false
	for _, w := range c.Warnings {
		found = found || strings.Contains(w, "the same run")
	}
	if !found {
		t.Errorf("no warning that baseline and current are the same run: %q", c.Warnings)
	}
}
