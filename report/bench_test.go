package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// bigMatrixReport is a 64-endpoint all-to-all: 4,032 ordered pairs, each
// with a 12-size sweep (4KiB … 8MiB), one slow link.
func bigMatrixReport() *Report { return matrixReport(64, sweep(4<<10, 8<<20)) }

// matrixReport is an n-endpoint all-to-all, n×(n−1) ordered pairs over the
// given sizes, with the link ep-17 → ep-42 at half speed.
func matrixReport(n int, sizes []int64) *Report {
	b := newBuilder(uint64(n))
	r := &Report{SchemaVersion: SchemaVersion, Run: baseMeta(fmt.Sprintf("run-a2a-%d", n))}
	r.Endpoints = endpoints("ep", n)
	r.Results = b.matrix(fmt.Sprintf("fabric-a2a-%d", n), n, 17, 42, 0.5, sizes)
	finish(r, b)
	return r
}

// BenchmarkHTML64Render is the Go side: report → HTML bytes.
func BenchmarkHTML64Render(b *testing.B) { benchHTMLRender(b, bigMatrixReport(), 4032) }

// BenchmarkHTML256Render: a 256-endpoint all-to-all, 65,280 pairs over an
// 8-size sweep (64 KiB … 8 MiB), the scale issue 22 asks the page to hold.
func BenchmarkHTML256Render(b *testing.B) { benchHTMLRender(b, matrix256(b), 65280) }

// BenchmarkHTML64Chromium is what a reader waits for: the 64-endpoint
// report opened in headless Chromium until every chart has drawn (the
// browser is started once, outside the timing).
func BenchmarkHTML64Chromium(b *testing.B) { benchHTMLChromium(b, bigMatrixReport(), "a2a64.png") }

// BenchmarkHTML256Chromium is the same for the 256-endpoint matrix.
func BenchmarkHTML256Chromium(b *testing.B) { benchHTMLChromium(b, matrix256(b), "a2a256.png") }

// BenchmarkReportJSON64 is Save + Load of the same report.json.
func BenchmarkReportJSON64(b *testing.B) { benchReportJSON(b, bigMatrixReport(), true) }

// BenchmarkReportJSON256 is Save + Load of the 256-endpoint report.json.
func BenchmarkReportJSON256(b *testing.B) { benchReportJSON(b, matrix256(b), true) }

func matrix256(b *testing.B) *Report {
	b.Helper()
	r := matrixReport(256, sweep(64<<10, 8<<20))
	if len(r.Results) != 65280 {
		b.Fatalf("%d results", len(r.Results))
	}
	return r
}

func benchHTMLRender(b *testing.B, r *Report, results int) {
	if len(r.Results) != results {
		b.Fatalf("%d results", len(r.Results))
	}
	var size int
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		size = len(renderHTML(b, r))
	}
	b.ReportMetric(float64(size)/1e6, "MB-html")
}

func benchHTMLChromium(b *testing.B, r *Report, screenshot string) {
	br := newBrowser(b, 1366, 900)
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
		_ = os.WriteFile(filepath.Join(dir, screenshot), br.screenshot(b, true), 0o644)
	}
}

// benchReportJSON is Save, and Load after it when load is set.
func benchReportJSON(b *testing.B, r *Report, load bool) {
	path := filepath.Join(b.TempDir(), "report.json")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := Save(path, r); err != nil {
			b.Fatal(err)
		}
		if !load {
			continue
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

// BenchmarkReportSave256 is Save alone: results are encoded one at a time,
// so what it allocates is the file's size in small pieces, never the file.
func BenchmarkReportSave256(b *testing.B) { benchReportJSON(b, matrix256(b), false) }
