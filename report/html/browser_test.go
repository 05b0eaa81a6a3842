package html

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// The browser lane: the HTML report opened in real headless Chromium from a
// file:// URL with the network off (every proxied request fails, and any
// request that is not file: or data: fails the test), every chart drawn,
// no console error.

// chromiumPath finds Chromium; without it the test skips, except in CI
// (CI set, e.g. CI=true) where a missing browser is a failure.
func chromiumPath(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found: .ci/setup --tests installs it (apt-get install chromium)")
	}
	t.Skip("chromium not installed (run .ci/setup --tests); the browser test runs in CI")
	return ""
}

// browserSession is one headless Chromium with what it saw.
type browserSession struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string // URLs that were not file: or data:
	console  []string // console errors and exceptions
}

func newBrowser(t testing.TB, width, height int) *browserSession {
	t.Helper()
	exe := chromiumPath(t)
	// Chromium now and then exits before chromedp's pipe connects when the
	// machine is loaded (CI runs every package at once); that is not what
	// these tests test, so a start is tried three times, and all three
	// errors are reported if none works. chromedp makes each try's profile
	// itself: then it also kills a failed try's helpers and removes it.
	var ctx context.Context
	var starts []string
	for attempt := 1; attempt <= 3 && ctx == nil; attempt++ {
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
			chromedp.ProxyServer("127.0.0.1:9"),
			chromedp.WindowSize(width, height),
		)
		c, cancel := chromedp.NewContext(alloc)
		// Start the browser (no timeout on the first Run: it would bound the browser's life).
		if err := chromedp.Do(c); err != nil {
			cancel()
			cancelAlloc()
			starts = append(starts, fmt.Sprintf("start %d: %v", attempt, err))
			if attempt < 3 {
				time.Sleep(time.Duration(attempt) * time.Second)
			}
			continue
		}
		t.Cleanup(func() { cancel(); cancelAlloc() })
		ctx = c
	}
	if ctx == nil {
		t.Fatalf("chromium did not start in 3 tries:\n%s", strings.Join(starts, "\n"))
	}
	if len(starts) > 0 {
		t.Logf("chromium started after %d failed start(s): %s", len(starts), strings.Join(starts, "; "))
	}
	b := &browserSession{ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") {
				b.requests = append(b.requests, u)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == "error" || e.Type == "assert" {
				b.console = append(b.console, fmt.Sprintf("console.%s: %s", e.Type, argsText(e.Args)))
			}
		case *runtime.EventExceptionThrown:
			b.console = append(b.console, "exception: "+e.ExceptionDetails.Text+" "+exceptionDesc(e.ExceptionDetails))
		case *log.EventEntryAdded:
			if e.Entry.Level == "error" {
				b.console = append(b.console, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		if len(a.Value) > 0 {
			parts = append(parts, string(a.Value))
		} else {
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

func exceptionDesc(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// open loads a file and waits, bounded, until every chart has drawn. It
// returns how long that took.
func (b *browserSession) open(t testing.TB, path string, timeout time.Duration) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`document.documentElement.getAttribute("data-charts-drawn") !== null`,
		chromedp.WithPollingInterval(10*time.Millisecond)))
	if err != nil {
		b.mu.Lock()
		console := b.console
		b.mu.Unlock()
		t.Fatalf("charts did not draw within %v: %v (console: %v)", timeout, err, console)
	}
	return time.Since(start)
}

// chartPixels returns, per chart, how many canvas pixels differ from the
// background, the canvas size, and how many of them lie in its lower half:
// a chart that drew nothing has none, a chart drawn halfway (a progressive
// heatmap caught mid-way) has none below.
const chartPixelsJS = `Array.from(document.querySelectorAll(".chart")).map(function (div) {
  var cv = div.querySelector("canvas");
  if (!cv || cv.width === 0 || cv.height === 0) { return [div.id, 0, 0]; }
  var d = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data, n = 0, low = 0, half = d.length / 2;
  for (var i = 0; i < d.length; i += 4) {
    if (d[i+3] > 0 && !(d[i] > 250 && d[i+1] > 250 && d[i+2] > 250)) { n++; if (i >= half) { low++; } }
  }
  return [div.id, n, cv.width * cv.height, low];
})`

func (b *browserSession) chartPixels(t testing.TB) [][4]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[][4]any](chartPixelsJS))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (b *browserSession) screenshot(t testing.TB, full bool) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	var shot []byte
	var err error
	if full {
		shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		shot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		t.Fatal(err)
	}
	return shot
}

func TestBrowserRendersReport(t *testing.T) {
	b := newBrowser(t, 1366, 1800)
	real, err := schema.Load(filepath.Join(fixture.TestdataDir, "real-loopback.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The recorded run over the two soft-RoCE VMs: RDMA bandwidth far below
	// its line rate, a latency, UCX over verbs and over TCP.
	softroce, err := schema.Load("../../testdata/softroce/run/report.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		r         *schema.Report
		minCharts int
	}{{"fixture", fixture.Full(1), 9}, {"real-loopback", real, 1}, {"real-softroce", softroce, 3},
		{"trust", fixture.Trust(), 1}, {"deepep", fixture.DeepEP(), 0},
		{"interrupted-empty", &schema.Report{SchemaVersion: schema.Version, Run: schema.RunMeta{ID: "x", Scenario: "s", Start: fixture.Start,
			Interrupted: true, Error: "interrupted before any job ended"}}, 0}} {
		t.Run(tc.name, func(t *testing.T) { checkReportInBrowser(t, b, tc.r, tc.minCharts, tc.name == "fixture") })
	}
}

// checkReportInBrowser opens r's HTML and checks every chart drew, nothing
// left the machine and the console stayed clean; it keeps screenshots.
func checkReportInBrowser(t *testing.T, b *browserSession, r *schema.Report, minCharts int, readme bool) {
	dir := t.TempDir()
	page := writeHTMLFile(t, dir, r)
	took := b.open(t, page, 60*time.Second)
	t.Logf("charts drew in %v", took)

	pixels := b.chartPixels(t)
	if len(pixels) < minCharts {
		t.Fatalf("%d charts on the page, want >= %d", len(pixels), minCharts)
	}
	for _, p := range pixels {
		drawn, total, low := p[1].(float64), p[2].(float64), p[3].(float64)
		if drawn < 0.005*total || low < 0.001*total {
			t.Errorf("chart %v drew %v of %v pixels, %v in its lower half: empty or partial", p[0], drawn, total, low)
		}
	}
	b.mu.Lock()
	requests, console := b.requests, b.console
	b.requests, b.console = nil, nil
	b.mu.Unlock() // the event listener takes the lock: never hold it across a browser call
	if len(requests) > 0 {
		t.Errorf("the report made network requests: %v", requests)
	}
	if len(console) > 0 {
		t.Errorf("console errors: %v", console)
	}

	full := b.screenshot(t, true)
	if err := os.WriteFile(filepath.Join(dir, "report-full.png"), full, 0o644); err != nil {
		t.Fatal(err)
	}
	top := b.screenshot(t, false)
	if err := os.WriteFile(filepath.Join(dir, "report.png"), top, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	if *fixture.Update && readme {
		fixture.Golden(t, "screenshot.png", top)
	}
	if keep := os.Getenv("RDMABENCH_SCREENSHOT_DIR"); keep != "" {
		name := strings.ReplaceAll(t.Name(), "/", "-")
		_ = os.WriteFile(filepath.Join(keep, name+"-full.png"), full, 0o644)
		_ = os.WriteFile(filepath.Join(keep, name+".png"), top, 0o644)
		b.sectionShots(t, filepath.Join(keep, name))
	}
}

// sectionShots keeps one viewport screenshot per section, for a person
// reviewing the layout (RDMABENCH_SCREENSHOT_DIR).
func (b *browserSession) sectionShots(t *testing.T, prefix string) {
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("section.card")).map(function (s) { return s.id; })`))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("`+id+`").scrollIntoView()`)); err != nil {
			t.Fatal(err)
		}
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(prefix+"-"+id+".png", shot, 0o644)
	}
}

func TestBrowserRendersComparison(t *testing.T) {
	b := newBrowser(t, 1366, 1200)
	var buf bytes.Buffer
	if err := WriteCompare(&buf, compareFixture(t)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "compare.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.open(t, page, 60*time.Second)
	pixels := b.chartPixels(t)
	if len(pixels) != 1 || pixels[0][1].(float64) < 0.005*pixels[0][2].(float64) {
		t.Fatalf("change chart did not draw: %v", pixels)
	}
	b.mu.Lock()
	requests, console := b.requests, b.console
	b.mu.Unlock() // the event listener takes the lock: never hold it across a browser call
	if len(requests) > 0 || len(console) > 0 {
		t.Fatalf("requests %v, console %v", requests, console)
	}
	shot := b.screenshot(t, false)
	_ = os.WriteFile(filepath.Join(dir, "compare.png"), shot, 0o644)
	if keep := os.Getenv("RDMABENCH_SCREENSHOT_DIR"); keep != "" {
		_ = os.WriteFile(filepath.Join(keep, "compare.png"), shot, 0o644)
	}
}

// TestBrowserMatrixPairOnDemand: a matrix with a size sweep carries every
// pair's curve packed; asking the page for a cell (what a click does) draws
// that pair's bandwidth per size in the chart below, equal to report.json's
// samples within the packing's resolution, and the tooltip names the cell.
func TestBrowserMatrixPairOnDemand(t *testing.T) {
	b := newBrowser(t, 1366, 1800)
	r := fixture.Matrix(8, fixture.Sweep(64<<10, 1<<20)) // ep-7 has no ep-17: the slow link is absent
	slow := &r.Results[5]                                // ep-0 → ep-6
	for i := range slow.Samples {
		*slow.Samples[i].BWAvgBps /= 2
	}
	slow.BestBps = 0
	fixture.Judge(slow, fixture.NICLineRate(), slow.Metric)
	checkReportInBrowser(t, b, r, 3, false) // heatmap, its pair chart, the envelope

	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	// The heatmap is the chart whose spec has a matrix; find the cell of ep-0 → ep-6.
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`(function () {
  var hm = Array.from(document.querySelectorAll(".chart")).map(function (d) { return echarts.getInstanceByDom(d); })
    .filter(function (c) { return c.getOption().series[0].type === "heatmap"; })[0];
  var opt = hm.getOption(), data = opt.series[0].data, E = opt.xAxis[0].data, cell = -1;
  for (var i = 0; i < data.length; i++) { if (E[data[i].value[1]] === "ep-0" && E[data[i].value[0]] === "ep-6") { cell = i; } }
  var id = hm.getDom().id, name = window.rdmabenchShowPair(id, cell);
  var pairDom = hm.getDom().parentNode.querySelectorAll(".chart");
  var pair = echarts.getInstanceByDom(pairDom[Array.prototype.indexOf.call(pairDom, hm.getDom()) + 1]).getOption();
  var tip = opt.tooltip[0].formatter({value: data[cell].value});
  return [name, pair.title[0].text, pair.series[0].data, tip];
})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "ep-0 → ep-6" || got[1] != "ep-0 → ep-6" {
		t.Fatalf("drawn pair %v, title %v", got[0], got[1])
	}
	div, _ := unitFor(slow.Family)
	points := got[2].([]any)
	if len(points) != len(slow.Samples) {
		t.Fatalf("%d points for %d samples", len(points), len(slow.Samples))
	}
	for i, s := range slow.Samples {
		want, v := *s.BWAvgBps/div, points[i].(float64)
		if math.Abs(v-want) > 0.02 {
			t.Errorf("size %d: page draws %.3f, report has %.3f", s.Bytes, v, want)
		}
	}
	if tip, _ := got[3].(string); !strings.HasPrefix(tip, "ep-0 → ep-6: 4") || !strings.Contains(tip, "% of line rate (") {
		t.Errorf("tooltip %q", tip)
	}
}
