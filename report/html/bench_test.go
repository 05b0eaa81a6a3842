package html

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// BenchmarkHTML64Render is the Go side: report → HTML bytes.
func BenchmarkHTML64Render(b *testing.B) { benchHTMLRender(b, fixture.BigMatrix(), 4032) }

// BenchmarkHTML256Render: a 256-endpoint all-to-all, 65,280 pairs over an
// 8-size sweep (64 KiB … 8 MiB), the scale issue 22 asks the page to hold.
func BenchmarkHTML256Render(b *testing.B) { benchHTMLRender(b, fixture.Matrix256(b), 65280) }

// BenchmarkHTML64Chromium is what a reader waits for: the 64-endpoint
// report opened in headless Chromium until every chart has drawn (the
// browser is started once, outside the timing).
func BenchmarkHTML64Chromium(b *testing.B) { benchHTMLChromium(b, fixture.BigMatrix(), "a2a64.png") }

// BenchmarkHTML256Chromium is the same for the 256-endpoint matrix.
func BenchmarkHTML256Chromium(b *testing.B) { benchHTMLChromium(b, fixture.Matrix256(b), "a2a256.png") }

func benchHTMLRender(b *testing.B, r *schema.Report, results int) {
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

func benchHTMLChromium(b *testing.B, r *schema.Report, screenshot string) {
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
