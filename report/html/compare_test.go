package html

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
)

// The change chart leaves room beyond the longest bar for its label, so a
// −95% label does not run over the pair's name.
func TestChangeChartRoomForLabels(t *testing.T) {
	spec, ok := changeChart(compareFixture(t))
	if !ok {
		t.Fatal("no change chart")
	}
	option := optionJSON(spec.Option)
	for _, want := range []string{
		`"min":function (e) { return e.min < 0 ? Math.floor(e.min * 1.2 / 10) * 10 : null; }`,
		`"max":function (e) { return e.max > 0 ? Math.ceil(e.max * 1.2 / 10) * 10 : null; }`,
	} {
		if !strings.Contains(option, want) {
			t.Errorf("option lacks %s:\n%s", want, option)
		}
	}
}

// compareFixture compares the fixtures' baseline and current runs.
func compareFixture(t *testing.T) *compare.Comparison {
	t.Helper()
	base, cur := fixture.BaseAndCurrent()
	return compare.Compare(base, cur, compare.Options{ThresholdPct: 5})
}
