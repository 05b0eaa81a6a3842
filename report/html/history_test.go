package html

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
)

func renderHistoryHTML(t testing.TB, h *history.History, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHistory(&buf, h, HistoryOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHistoryHTML(t *testing.T) {
	dir := t.TempDir()
	paths, reps := fixture.Nightly(20)
	fixture.WriteRuns(t, dir, paths, reps)
	_ = os.WriteFile(filepath.Join(dir, "runs", "nightly-03", "report.html"), []byte("<html>"), 0o644)
	h := history.Load([]string{dir})
	html := string(renderHistoryHTML(t, h, dir))
	for _, want := range []string{
		`<div class="chart" id="chart-3"`,                                 // one chart per series
		`"name":"line rate","yAxis":400`, `"name":"expected","yAxis":280`, // Gb/s
		`"name":"stepped down"`, `"value":"-23%"`,
		`nic.firmware was \"28.43.1014\", now \"28.44.1000\"`,
		`"xAxis":` + itoa(time.Date(2026, 1, 13, 2, 0, 0, 0, time.UTC).UnixMilli()),
		`<a href="runs/nightly-03/report.html">nightly-03</a>`, `<a href="runs/nightly-04/report.json">nightly-04</a>`,
		`"name":"noise ±3×"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("no %q in the page", want)
		}
	}
}

func TestBrowserRendersHistory(t *testing.T) {
	b := newBrowser(t, 1366, 1200)
	dir := t.TempDir()
	paths, reps := fixture.Nightly(20)
	fixture.WriteRuns(t, dir, paths, reps)
	page := filepath.Join(dir, "history.html")
	if err := os.WriteFile(page, renderHistoryHTML(t, history.Load([]string{dir}), dir), 0o644); err != nil {
		t.Fatal(err)
	}
	b.open(t, page, 60*time.Second)
	pixels := b.chartPixels(t)
	if len(pixels) != 3 {
		t.Fatalf("%d charts, want 3", len(pixels))
	}
	for _, p := range pixels {
		if drawn, total := p[1].(float64), p[2].(float64); drawn < 0.005*total {
			t.Errorf("chart %v drew %v of %v pixels", p[0], drawn, total)
		}
	}
	b.mu.Lock()
	requests, console := b.requests, b.console
	b.mu.Unlock()
	if len(requests) > 0 || len(console) > 0 {
		t.Fatalf("requests %v, console %v", requests, console)
	}
	shot := b.screenshot(t, true)
	_ = os.WriteFile(filepath.Join(dir, "history.png"), shot, 0o644)
	if keep := os.Getenv("RDMABENCH_SCREENSHOT_DIR"); keep != "" {
		_ = os.WriteFile(filepath.Join(keep, "history.png"), shot, 0o644)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
