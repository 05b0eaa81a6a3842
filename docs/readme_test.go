package docs

import (
	"os"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/export"
)

// readmeMaxBytes bounds the README: a front door, with the rest in docs/.
const readmeMaxBytes = 16384

// setupLines are the README's two set-up lines, byte for byte: .ci/run
// runs the second, and the tests that check set-up read both.
var setupLines = []string{
	"    ./.ci/setup && make build && ./bin/rdmabench run scenarios/loopback.yaml   # the main job, local backend",
	"    ./.ci/setup --tests && make lint test                                     # lint, then every test lane",
}

// TestReadmeIsAFrontDoor: README.md stays under 16 KB and keeps its two
// set-up lines as they are.
func TestReadmeIsAFrontDoor(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, more than %d: move the detail into docs/", len(data), readmeMaxBytes)
	}
	lines := strings.Split(string(data), "\n")
	for _, want := range setupLines {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("README.md lacks the set-up line, byte for byte:\n%s", want)
		}
	}
}

// TestMetricsTableIsOpenMetricsFamilies: the metric tables of the nightly
// CI guide list exactly the families WriteOpenMetrics and
// WriteCompareOpenMetrics write, in their order.
func TestMetricsTableIsOpenMetricsFamilies(t *testing.T) {
	checkMetricsTable(t, "| metric | labels | value |", export.OpenMetricsFamilies)
	checkMetricsTable(t, "| compare metric | labels | value |", export.CompareOpenMetricsFamilies)
}

// checkMetricsTable: the nightly guide's table under header lists exactly
// the families of fams, in their order.
func checkMetricsTable(t *testing.T, header string, fams []struct{ Name, Help string }) {
	t.Helper()
	data, err := os.ReadFile("user-guide/nightly-ci.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "| `"):
			got = append(got, strings.Trim(strings.SplitN(line, "|", 3)[1], " `"))
		case in:
			in = false
		}
	}
	var want []string
	for _, f := range fams {
		want = append(want, f.Name)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("nightly-ci.md table %q:\n%s\nwant:\n%s", header, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
