package report

import (
	"strings"
	"testing"
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
