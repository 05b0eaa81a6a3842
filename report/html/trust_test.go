package html

import (
	"bytes"
	"context"
	stdhtml "html"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/export"
	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
	"github.com/rdmabench/rdmabench/scenarios"
)

func i64(n int64) *int64 { return &n }

// preflightReport is the fixture with a preflight section, a verified result
// and an invalid one.
func preflightReport() *schema.Report {
	r := fixture.Full(1)
	r.Preflight = []schema.PreflightEndpoint{
		{Endpoint: "ep-0", Host: "vm1", Device: "rxe0", Checks: []schema.PreflightCheck{
			{ID: "rdma-device", Status: schema.PreflightPass, Evidence: "rxe0 present"},
			{ID: "mtu-match", Status: schema.PreflightFail, Dooms: schema.DoomsRDMA, Evidence: "netdev eth0 MTU 4200 carries IB MTU 4096; active IB MTU 4096; but ep-1 has active IB MTU 1024 (netdev MTU 1500)",
				Fix: "give every endpoint's netdev the same MTU"},
			{ID: "pcie-link", Status: schema.PreflightWarn, Evidence: "mlx5_1: 16.0 GT/s PCIe x16 of 32.0 GT/s PCIe x16: downtrained", Fix: "reseat the card"},
		}},
		{Endpoint: "ep-1", Error: "reading preflight facts on ep-1: connection refused"},
	}
	var pass, other *schema.Result
	for i := range r.Results {
		switch {
		case pass == nil && r.Results[i].Verdict == schema.VerdictPass && r.Results[i].BestBps > 0:
			pass = &r.Results[i]
		case other == nil && r.Results[i].Verdict == schema.VerdictPass && r.Results[i].BestBps > 0:
			other = &r.Results[i]
		}
	}
	pass.Path = &schema.PathProof{Verified: true, ToolBytes: 6553600, ToolPackets: 1600, Detail: "client-0 rxe0 port 1 moved 1600 packets, the tool 1600 (100.0%)",
		Endpoints: []schema.PathCounters{{Endpoint: "client-0", Device: "rxe0", Port: 1, TxPackets: i64(1600), RxPackets: i64(100)}}}
	other.Verdict, other.Reason = schema.VerdictInvalid, "path not proved: server-0 rxe0 port 1 moved 0 packets, the tool 1600 (0.0%): the traffic did not cross rxe0"
	other.Path = &schema.PathProof{Invalid: true, ToolPackets: 1600, Detail: "server-0 rxe0 port 1 moved 0 packets", Endpoints: []schema.PathCounters{{Endpoint: "server-0", Device: "rxe0", Port: 1, TxPackets: i64(0), RxPackets: i64(0)}}}
	r.Summary = schema.CountVerdicts(r.Results)
	return r
}

func TestTrustSummary(t *testing.T) {
	var b bytes.Buffer
	if err := text.WriteSummaryTable(&b, preflightReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"│ FAIL      │ ep-0     │ mtu-match", "│ ERROR     │ ep-1", "│ WARN      │ ep-0     │ pcie-link", "PASS ✓", "INVALID", ", 1 invalid (✓ 1 verified by port counters)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rdma-device") {
		t.Error("the summary lists passing checks")
	}
	if strings.Index(out, "INVALID") > strings.Index(out, "PASS ✓") {
		t.Error("invalid is not ranked with the failures")
	}
}

func TestTrustJUnitAndCompare(t *testing.T) {
	r := preflightReport()
	var b bytes.Buffer
	if err := export.WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `type="invalid_path"`) {
		t.Errorf("JUnit: no invalid_path failure:\n%s", b.String())
	}
	c := compare.Compare(fixture.Full(1), r, compare.Options{})
	found := false
	for _, row := range c.Rows {
		if strings.HasPrefix(row.Note, "invalid: ") {
			found = row.Status == compare.StatusBroken
		}
	}
	if !found {
		t.Error("compare: an invalid current result is not a broken row")
	}
	only := &schema.Report{Results: []schema.Result{r.Results[0]}}
	only.Results[0].Verdict = schema.VerdictInvalid
	if history.RunVerdict(only) != schema.VerdictFail {
		t.Errorf("run verdict of an invalid result: %s", history.RunVerdict(only))
	}
}

func TestTrustHTML(t *testing.T) {
	b := newBrowser(t, 1366, 1800)
	checkReportInBrowser(t, b, preflightReport(), 9, false)
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.querySelectorAll("#preflight table").length,
		document.querySelectorAll("#preflight tbody tr").length, document.querySelectorAll(".v-verified").length,
		document.querySelectorAll(".v-invalid").length, document.querySelector('nav a[href="#preflight"]') ? 1 : 0]`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 4, 1, 1, 1}; len(got) != 5 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] < want[3] || got[4] != want[4] {
		t.Fatalf("preflight tables, rows, verified badges, invalid badges, nav link: %v, want %v", got, want)
	}
}

func TestTrustHistorySkipsInvalid(t *testing.T) {
	r := preflightReport()
	n := 0
	for _, ir := range history.IndexOf(r).Results {
		for _, res := range r.Results {
			if res.Verdict == schema.VerdictInvalid && res.Test == ir.Test && res.Pair() == ir.Pair && res.Variant == ir.Variant && res.Backend == ir.Backend && res.Op == ir.Op {
				n++
			}
		}
	}
	if n != 0 {
		t.Fatalf("an invalid result is in the history index %d time(s)", n)
	}
}

// A leg whose congestion or loss counters moved says so beside its verdict,
// with the counters' deltas; a clean one adds nothing.
func TestHealthBadge(t *testing.T) {
	r := preflightReport()
	for i := range r.Results {
		if p := r.Results[i].Path; p != nil && p.Verified {
			p.Health, p.HealthDetail = schema.HealthCongested, "server-0 mlx5_0: hw_counters/np_cnp_sent +12"
		} else if p != nil {
			p.Health = schema.HealthClean
		}
	}
	out := stdhtml.UnescapeString(string(renderHTML(t, r)))
	if n := strings.Count(out, `class="badge v-health"`); n != 1 {
		t.Fatalf("%d health badges, want 1 (congested; clean shows none)", n)
	}
	if !strings.Contains(out, ">congested</span>") || !strings.Contains(out, "hw_counters/np_cnp_sent +12") {
		t.Error("the badge or the deltas are missing")
	}
}

// A quick run says so in the header: its figures are a first look.
func TestQuickProfileBadge(t *testing.T) {
	r := preflightReport()
	if strings.Contains(string(renderHTML(t, r)), "quick profile") {
		t.Fatal("a full run shows the quick badge")
	}
	r.Run.Profile = scenarios.QuickSummary
	if out := stdhtml.UnescapeString(string(renderHTML(t, r))); !strings.Contains(out, ">quick profile</span>") || !strings.Contains(out, "1 repetition") {
		t.Error("the quick profile is not said in the header")
	}
}
