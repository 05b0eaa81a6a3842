package html

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
)

// withoutECharts renders as a binary built without `make assets` would.
func withoutECharts(t *testing.T) {
	t.Helper()
	old := echartsData
	echartsData = func() []byte { return nil }
	t.Cleanup(func() { echartsData = old })
}

// TestHTMLWithoutECharts: a binary built with plain `go build` still
// writes every page with its tables; where a chart would be, a plain note
// says why it is not there. Nothing fails.
func TestHTMLWithoutECharts(t *testing.T) {
	withoutECharts(t)
	if ChartsIncluded() {
		t.Fatal("ChartsIncluded with no asset")
	}
	var page, cmp, hist bytes.Buffer
	if err := Write(&page, fixture.Full(1), Options{}); err != nil {
		t.Fatalf("report: %v", err)
	}
	if err := WriteCompare(&cmp, compareFixture(t)); err != nil {
		t.Fatalf("compare: %v", err)
	}
	if err := WriteHistory(&hist, history.Build(fixture.Nightly(5)), HistoryOptions{}); err != nil {
		t.Fatalf("history: %v", err)
	}
	for name, b := range map[string]string{"report": page.String(), "compare": cmp.String(), "history": hist.String()} {
		if !strings.Contains(b, NoChartsNote) {
			t.Errorf("%s: no note where the charts would be", name)
		}
		if strings.Contains(b, "echarts.init") || strings.Contains(b, `class="chart"`) {
			t.Errorf("%s: draws charts without the library", name)
		}
		if !strings.Contains(b, `data-charts-drawn`) {
			t.Errorf("%s: the page does not say it is done (data-charts-drawn)", name)
		}
	}
	for _, want := range []string{"Verdicts, worst first", "ep-3 → ep-5", "nic.firmware"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report without charts lacks %q", want)
		}
	}
}
