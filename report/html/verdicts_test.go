package html

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// TestHTMLVerdictTable: no inner scroll box; each row shows what it was
// judged against beside its verdict; the nodes of a pair are on the page,
// not only on hover; a skip reason shared by rows of a test is said once.
func TestHTMLVerdictTable(t *testing.T) {
	r := fixture.Full(1)
	for i := range r.Results {
		if r.Results[i].Expectation == "" {
			r.Results[i].Expectation = ">= 90% of line rate"
		}
	}
	for range 3 {
		r.Results = append(r.Results, schema.Result{Test: "rdma-only", Tool: "ib_write_bw", From: "ep-0", To: "ep-1", Verdict: schema.VerdictSkipped,
			Reason: "preflight rdma-device: no RDMA device under /sys/class/infiniband (a long reason said once)"})
	}
	html := string(renderHTML(t, r))
	if strings.Contains(htmlCSS, "max-height:560px") {
		t.Error("the verdict table still scrolls inside a box")
	}
	if !strings.Contains(html, "<th>expected</th>") || !strings.Contains(html, `<td class="expect">&gt;= 90% of line rate</td>`) {
		t.Error("no expectation beside the verdict")
	}
	verdicts := html[strings.Index(html, `id="verdicts"`):]
	verdicts = verdicts[:strings.Index(verdicts, "</section>")]
	if n := strings.Count(verdicts, "a long reason said once"); n != 1 {
		t.Errorf("the shared skip reason appears %d times in the verdicts, want once", n)
	}
	if !strings.Contains(html, `<span class="nodes">`) {
		t.Error("node placement not on the page")
	}
}

// TestChartsNameTheirAxes: the history trend and the waterfall say what
// their x axis is.
func TestChartsNameTheirAxes(t *testing.T) {
	html := string(renderHistoryHTML(t, history.Build(fixture.Nightly(5)), t.TempDir()))
	if !strings.Contains(html, `run start (UTC)`) {
		t.Error("history chart without an x-axis name")
	}
}

// A result measured more than once is drawn with its spread: a band from
// its lowest to its highest repetition per size, kept out of the legend.
func TestChartsShadeTheSpreadOfRepetitions(t *testing.T) {
	page := buildPage(fixture.Full(1), Options{})
	var nixl *chartSpec
	for i := range page.Charts {
		if strings.Contains(page.Charts[i].Title, "bandwidth per block size and backend") {
			nixl = &page.Charts[i]
		}
	}
	if nixl == nil {
		t.Fatal("no NIXL chart")
	}
	if !strings.Contains(nixl.Option, `"stack":"spread of UCCL"`) || !strings.Contains(nixl.Note, "lowest to the highest of its repetitions") {
		t.Errorf("no band for UCCL's repetitions: note %q", nixl.Note)
	}
	if !strings.Contains(nixl.Option, `"data":["UCX","UCCL","LIBFABRIC"]`) {
		t.Errorf("legend should name only the backends: %s", nixl.Option[:min(len(nixl.Option), 400)])
	}
}

// A verdict row of a many-rank job names its first and last nodes and how
// many, not all of them (the title keeps every endpoint).
func TestVerdictRowFoldsManyNodes(t *testing.T) {
	res := schema.Result{Test: "a2a", Tool: "alltoall_perf", Verdict: schema.VerdictPass}
	for i := range 20 {
		res.Endpoints = append(res.Endpoints, schema.ResultEndpoint{Role: "rank", Name: fmt.Sprintf("ep-%d", i), Node: fmt.Sprintf("node-%d", i)})
	}
	row := verdictRowOf(&res, Options{}, nil)
	if row.Nodes != "node-0 → node-1 → node-2 → … → node-17 → node-18 → node-19 (20 nodes)" || strings.Count(row.PairTitle, "\n") != 19 {
		t.Errorf("nodes %q; title has %d lines", row.Nodes, strings.Count(row.PairTitle, "\n")+1)
	}
}
