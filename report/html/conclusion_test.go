package html

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// loopbackLike is what loopback gives on a host without RDMA: three RDMA
// tests skipped for the one reason, four TCP legs passed on one machine,
// no line rate.
func loopbackLike() *schema.Report {
	why := "preflight rdma-device: no RDMA device under /sys/class/infiniband on a-0 (fix: load the NIC's RDMA driver)"
	r := &schema.Report{Run: schema.RunMeta{ID: "loopback-1", Scenario: "loopback", Backend: "local",
		LineRate: &schema.LineRate{Source: "none", Detail: "no RDMA NIC found"}}}
	for _, t := range []string{"rping", "write-bw", "send-lat"} {
		r.Results = append(r.Results, schema.Result{Test: t, Tool: t, Verdict: schema.VerdictSkipped, Reason: why})
	}
	for _, t := range []string{"ucx-tcp-bw", "ucx-tcp-bw", "ucx-tcp-bw", "iperf3"} {
		r.Results = append(r.Results, schema.Result{Test: t, Tool: t, From: "a-0", To: "b-0", Verdict: schema.VerdictPass, BestBps: 1e10,
			SameMachine: "vm", Reason: "every side ran on vm: the traffic did not cross the fabric, not a fabric figure"})
	}
	return r
}

// The page opens with a line a reviewer can act on: the counts, why
// tests were skipped, and whether anything measured the fabric.
func TestConclusionFirstLine(t *testing.T) {
	got := conclusion(loopbackLike())
	want := "4 passed, 3 skipped: no RDMA device under /sys/class/infiniband; nothing measured the fabric (every figure is of one machine)"
	if got != want {
		t.Errorf("conclusion:\n %s\nwant\n %s", got, want)
	}
	html := string(renderHTML(t, loopbackLike()))
	if i, j := strings.Index(html, `class="conclusion"`), strings.Index(html, `id="verdicts"`); i < 0 || i > j {
		t.Errorf("no conclusion before the verdicts")
	}
}

// Worst first is by severity: a skipped test (something did not run)
// above a pass; one reason shared by consecutive rows is said once, even
// across tests; a "-" in every "% of line rate" says why at the top.
func TestVerdictsBySeverityFoldedReasons(t *testing.T) {
	html := string(renderHTML(t, loopbackLike()))
	if strings.Index(html, ">SKIPPED<") > strings.Index(html, ">PASS<") {
		t.Error("PASS listed above SKIPPED")
	}
	if n := strings.Count(html, "no RDMA device under /sys/class/infiniband on a-0 (fix"); n != 1 {
		t.Errorf("the skip reason appears %d times, want once", n)
	}
	if !strings.Contains(html, "% of line rate is - in every row: no line rate is known (none: no RDMA NIC found") {
		t.Error("no word why % of line rate is - everywhere")
	}
}

// Preflight statuses are coloured as verdicts are.
func TestPreflightStatusesColoured(t *testing.T) {
	r := loopbackLike()
	r.Preflight = []schema.PreflightEndpoint{{Endpoint: "a-0", Checks: []schema.PreflightCheck{
		{ID: "rdma-device", Status: schema.PreflightFail}, {ID: "binary-rping", Status: schema.PreflightSkip},
		{ID: "memlock", Status: schema.PreflightWarn}, {ID: "binary-iperf3", Status: schema.PreflightPass}}}}
	html := string(renderHTML(t, r))
	for _, want := range []string{`<span class="badge p-fail">FAIL</span>`, `<span class="badge p-skip">SKIP</span>`,
		`<span class="badge p-warn">WARN</span>`, `<span class="badge p-pass">PASS</span>`} {
		if !strings.Contains(html, want) {
			t.Errorf("preflight lacks %s", want)
		}
	}
}
