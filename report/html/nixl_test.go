package html

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// TestNixlComparisonAcrossTests reads the real nixlbench run between the
// soft-RoCE VMs, where the scenario names one test per backend (kv-ucx,
// kv-libfabric): the two backends share one chart and one ranking, because
// what they share is the workload (pair, READ, DRAM on both sides), not the
// test's name. A backend that did not run (UCCL, its plugin not in the
// build) is a row that says so, not a missing one.
func TestNixlComparisonAcrossTests(t *testing.T) {
	r, err := schema.Load("../../testdata/nixl/softroce-vms-ssh/rdmabench/report.json")
	if err != nil {
		t.Skipf("no capture: %v", err)
	}
	// As the runner records a skipped leg: the test's op and the planned
	// command lines, placeholders unfilled; no figures.
	uccl := schema.Result{Test: "kv-uccl", Tool: "nixlbench", Family: parsers.FamilyNixlbench, Backend: "UCCL", Op: "READ",
		From: "decode-0", To: "prefill-0", Verdict: schema.VerdictSkipped, Reason: "nixlbench has no UCCL plugin",
		Commands: []string{"decode-0$ nixlbench --etcd_endpoints=${etcd} --backend=UCCL --op_type=READ --initiator_seg_type=DRAM --target_seg_type=DRAM"}}
	failed := uccl
	failed.Test, failed.Backend, failed.Verdict, failed.Reason = "kv-gpunetio", "GPUNETIO", schema.VerdictError, "timed out"
	r.Results = append(r.Results, uccl, failed)

	var nixl *section
	for _, s := range buildSections(r) {
		if s.ID == "nixl" {
			nixl = &s
		}
	}
	if nixl == nil {
		t.Fatal("no NIXL section")
	}
	if len(nixl.Charts) != 1 || len(nixl.Tables) != 1 {
		t.Fatalf("%d charts, %d tables; want one of each for one workload", len(nixl.Charts), len(nixl.Tables))
	}
	c, tab := nixl.Charts[0], nixl.Tables[0]
	if !strings.Contains(c.Title, "decode-0 → prefill-0 READ DRAM←DRAM") {
		t.Errorf("chart title %q does not name the workload", c.Title)
	}
	for _, series := range []string{`"name":"UCX"`, `"name":"LIBFABRIC"`} {
		if !strings.Contains(c.Option, series) {
			t.Errorf("chart lacks series %s", series)
		}
	}
	var got []string
	for _, row := range tab.Rows {
		got = append(got, strings.Join(row, " | "))
	}
	want := []string{
		"1 | LIBFABRIC | kv-libfabric | 99.68 Mb/s @256KiB | 4.0% | pass",
		"2 | UCX | kv-ucx | 50.66 Mb/s @256KiB | 2.0% | pass",
		"- | UCCL | kv-uccl | not run here | - | skipped: nixlbench has no UCCL plugin",
		"- | GPUNETIO | kv-gpunetio | no result | - | error: timed out",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ranking:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Results[0].Family != parsers.FamilyNixlbench {
		t.Errorf("family %q", r.Results[0].Family)
	}
}
