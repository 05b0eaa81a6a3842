package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHistoryTable(t *testing.T) {
	h := BuildHistory(nightlyReports(20))
	var buf bytes.Buffer
	if err := WriteHistoryTable(&buf, h, MaxHistoryTableRows); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "rule:") {
		t.Errorf("the rule is printed without --explain")
	}
	if err := WriteHistoryRule(&buf, h); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"20 runs from 2026-01-01 (nightly-00) to 2026-01-20 (nightly-19), 3 series, 2 stepped down",
		`environment changed at nightly-12 (2026-01-13): nic.firmware was "28.43.1014", now "28.44.1000"`,
		"│ write-bw WRITE │ a-0 → b-0 │         │ 1M   │ 20   │ 303.00 Gb/s │ 393.00 Gb/s │ 390.00 Gb/s │ ±0.5% │ 2026-01-13 (nightly-12) -23.2%: 392.00 Gb/s → 301.00 Gb/s │",
		"│ send-lat       │ a-0 → b-0 │         │ 2B   │ 20   │ 2.61 µs     │ 1.90 µs     │ 1.92 µs     │ ±0.5% │ 2026-01-16 (nightly-15) +36.6%: 1.91 µs → 2.61 µs         │",
		"rule: noise = 1.4826",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// The stepped-down series come first (the latency, 36.6% worse, before
	// the bandwidth, 23.2% worse), the steady one last.
	if i, j, k := strings.Index(out, "│ 2B "), strings.Index(out, "│ 1M "), strings.Index(out, "│ 64K "); i < 0 || j < i || k < j {
		t.Errorf("order:\n%s", out)
	}
	buf.Reset()
	_ = WriteHistoryTable(&buf, h, 1)
	if !strings.Contains(buf.String(), "… 2 more series not shown") {
		t.Errorf("no fold line:\n%s", buf.String())
	}
}

func renderHistoryHTML(t testing.TB, h *History, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHistoryHTML(&buf, h, HistoryHTMLOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHistoryHTML(t *testing.T) {
	dir := t.TempDir()
	paths, reps := nightlyReports(20)
	writeRuns(t, dir, paths, reps)
	_ = os.WriteFile(filepath.Join(dir, "runs", "nightly-03", "report.html"), []byte("<html>"), 0o644)
	h := LoadHistory([]string{dir})
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

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestBrowserRendersHistory(t *testing.T) {
	b := newBrowser(t, 1366, 1200)
	dir := t.TempDir()
	paths, reps := nightlyReports(20)
	writeRuns(t, dir, paths, reps)
	page := filepath.Join(dir, "history.html")
	if err := os.WriteFile(page, renderHistoryHTML(t, LoadHistory([]string{dir}), dir), 0o644); err != nil {
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
