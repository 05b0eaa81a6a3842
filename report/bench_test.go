package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// bigMatrixReport is a 64-endpoint all-to-all: 4,032 ordered pairs, each
// with a 12-size sweep (4KiB … 8MiB), one slow link.
func bigMatrixReport() *Report {
	b := newBuilder(64)
	r := &Report{SchemaVersion: SchemaVersion, Run: baseMeta("run-a2a-64")}
	r.Endpoints = endpoints("ep", 64)
	r.Results = b.matrix("fabric-a2a-64", 64, 17, 42, 0.5, sweep(4<<10, 8<<20))
	finish(r, b)
	return r
}

// BenchmarkHTML64Render is the Go side: report → HTML bytes.
func BenchmarkHTML64Render(b *testing.B) {
	r := bigMatrixReport()
	if len(r.Results) != 4032 {
		b.Fatalf("%d results", len(r.Results))
	}
	var size int
	b.ResetTimer()
	for range b.N {
		size = len(renderHTML(b, r))
	}
	b.ReportMetric(float64(size)/1e6, "MB-html")
}

// BenchmarkHTML64Chromium is what a reader waits for: the 64-endpoint
// report opened in headless Chromium until every chart has drawn (the
// browser is started once, outside the timing).
func BenchmarkHTML64Chromium(b *testing.B) {
	br := newBrowser(b, 1366, 900)
	r := bigMatrixReport()
	page := writeHTMLFile(b, b.TempDir(), r)
	st, err := os.Stat(page)
	if err != nil {
		b.Fatal(err)
	}
	br.open(b, page, 60*time.Second) // warm the browser's caches once
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		total += br.open(b, page, 60*time.Second)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-drawn")
	b.ReportMetric(float64(st.Size())/1e6, "MB-html")
	pixels := br.chartPixels(b)
	for _, p := range pixels {
		if p[1].(float64) == 0 || p[3].(float64) == 0 {
			b.Fatalf("chart %v empty or partial: %v", p[0], p)
		}
	}
	if dir := os.Getenv("RDMABENCH_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "a2a64.png"), br.screenshot(b, true), 0o644)
	}
}

// BenchmarkReportJSON64 is Save + Load of the same report.json.
func BenchmarkReportJSON64(b *testing.B) {
	r := bigMatrixReport()
	path := filepath.Join(b.TempDir(), "report.json")
	b.ResetTimer()
	for range b.N {
		if err := Save(path, r); err != nil {
			b.Fatal(err)
		}
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
	st, _ := os.Stat(path)
	b.ReportMetric(float64(st.Size())/1e6, "MB-json")
}

// The terminal summary of 4,032 results stays short.
func TestSummaryTableFoldsLargeMatrix(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, bigMatrixReport()); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(buf.Bytes(), []byte("\n"))
	if lines > 20 || !bytes.Contains(buf.Bytes(), []byte("ep-17 → ep-42")) || !bytes.Contains(buf.Bytes(), []byte("… 4024 more pairs")) {
		t.Fatalf("%d lines:\n%s", lines, buf.String())
	}
}
