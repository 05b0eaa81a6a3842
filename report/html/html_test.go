package html

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
)

func renderHTML(t testing.TB, r *schema.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHTMLContent(t *testing.T) {
	html := string(renderHTML(t, fixture.Full(1)))
	for _, want := range []string{
		"Verdicts, worst first", "All-to-all matrices", "NIXL backend comparison", "Latency percentiles",
		"NCCL bus bandwidth", "Percent of line rate per pair", "TCP fallback", "t-tcp", "raw/fabric-a2a/",
		"ep-3 → ep-5", "nic.firmware", "ep-alltoall — NCCL bus bandwidth versus size", "line rate 400 Gb/s",
		"line rate 100 GB/s", "prefill-0 → decode-0 WRITE VRAM←VRAM: backends ranked", "echarts.init",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// Offline: no script, stylesheet or image from elsewhere.
	for _, bad := range []string{`src="http`, `href="http`, "go-echarts-assets", "cdn."} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML refers to the network: %q", bad)
		}
	}
	// The slow link is the first row of the slow-endpoint table.
	i := strings.Index(html, "fabric-a2a: endpoints with the lowest")
	if i < 0 || !strings.Contains(html[i:i+600], "ep-3") && !strings.Contains(html[i:i+600], "ep-5") {
		t.Errorf("slow endpoint table does not start with ep-3 or ep-5")
	}
}

// writeHTMLFile renders r into dir/report.html.
func writeHTMLFile(t testing.TB, dir string, r *schema.Report) string {
	t.Helper()
	p := filepath.Join(dir, "report.html")
	if err := os.WriteFile(p, renderHTML(t, r), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A pair far below its line rate is the one a reader must see against the
// line: the y axis reaches up to the line rate instead of stopping at the
// data (the recorded soft-RoCE run: 0.48 Gb/s on a 2.5 Gb/s link).
func TestBandwidthChartReachesLineRate(t *testing.T) {
	bw := func(gbps float64) *float64 { v := gbps * 1e9; return &v }
	r := &schema.Result{Test: "write-bw", Tool: "ib_write_bw", From: "a", To: "b",
		LineRate: &schema.LineRate{Bps: 2.5e9, Source: schema.LineRateNIC},
		Samples:  []parsers.Sample{{Bytes: 4096, BWAvgBps: bw(0.07)}, {Bytes: 65536, BWAvgBps: bw(0.47)}}}
	option := optionJSON(bandwidthChart("write-bw", []*schema.Result{r}).Option)
	for _, want := range []string{
		`"name":"line rate 2.5 Gb/s"`, `"yAxis":2.5`,
		`"max":function (e) { return e.max < 2.5 ? 2.5 : null; }`,
	} {
		if !strings.Contains(option, want) {
			t.Errorf("option lacks %s:\n%s", want, option)
		}
	}
	// Without a line rate the axis is ECharts' own.
	r.LineRate = nil
	if option := optionJSON(bandwidthChart("write-bw", []*schema.Result{r}).Option); strings.Contains(option, `"max":`) || strings.Contains(option, "line rate") {
		t.Errorf("no line rate, yet the option sets one:\n%s", option)
	}
}

// Raw output links are named by side; a discarded attempt's (run again
// after a clock_error) says which attempt it was.
func TestRawLabel(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"raw/write-bw_r0/0-0-client-0-client.out", "client"},
		{"raw/write-bw_r0/0-0-client-0-client.attempt-1.out", "client (attempt 1)"},
		{"raw/write-bw_r0/0-0-server-0-server.attempt-2.out", "server (attempt 2)"},
		{"raw/x/0-0-a-b.out", "log 3"},
	} {
		if got := rawLabel(c.path, 2); got != c.want {
			t.Errorf("rawLabel(%s) = %q; want %q", c.path, got, c.want)
		}
	}
}

// A report written by `rdmabench run` on this machine (loopback scenario,
// local backend, no RDMA: skipped RDMA tests, ucx_perftest over TCP with one
// leg per size, iperf3) renders as the fixtures do.
func TestRealReport(t *testing.T) {
	r, err := schema.Load(filepath.Join(fixture.TestdataDir, "real-loopback.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := text.WriteSummaryTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "real-loopback-summary.txt", buf.Bytes())
	for _, want := range []string{"a-0 → b-0 [1048576]", "SKIPPED", "7 results: 1 pass, 3 fail, 0 error, 3 skipped"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// The three per-size legs of ucx-tcp-bw draw as one line of three points.
	p := buildPage(r, Options{})
	var found bool
	for _, s := range p.Sections {
		for _, c := range s.Charts {
			if strings.HasPrefix(c.Title, "ucx-tcp-bw") {
				found = strings.Count(c.Option, `"type":"line"`) == 1
			}
		}
	}
	if !found {
		t.Error("ucx-tcp-bw is not one line through its three sizes")
	}
}

// The EP budget's section, golden: the real 4×H100 DeepEP run, each phase
// at its slowest rank, what it adds per output token and prefill pass.
func TestEPBudgetSection(t *testing.T) {
	page := string(renderHTML(t, fixture.DeepEP()))
	i := strings.Index(page, `<section class="card" id="epbudget">`)
	if i < 0 {
		t.Fatal("no EP budget section")
	}
	j := strings.Index(page[i:], "</section>")
	sec := page[i : i+j+len("</section>\n")]
	fixture.Golden(t, "deepep-epbudget-section.html", []byte(sec))
	for _, want := range []string{`href="#epbudget"`, "5.92 ms per output token (TPOT)", "38.06 µs (rank 2 of 4, FP8)"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// The cross-rail check has its section: the verdict, the blocked pair and
// the HCA settings.
func TestHTMLRailReach(t *testing.T) {
	html := string(renderHTML(t, fixture.RailReach()))
	for _, want := range []string{"Every expert can cross: rail reachability", "not WideEP-ready: 1 of 4 rail pairs",
		"vm2 rail0 rxe0", "vm1 rail1 rxe1", "RDMA_CM_EVENT_ADDR_ERROR", "NVSHMEM_HCA_LIST", "DEEP_EP_DEVICE_TO_HCA_MAPPING", "0:rxe0:1"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
