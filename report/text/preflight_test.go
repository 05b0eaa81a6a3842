package text

import (
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// A skip (a tool's check whose tests another check skips) is left out of
// run's problems table, where the failing check says it once, and listed
// after the warnings by `rdmabench preflight`.
func TestPreflightRowsSkips(t *testing.T) {
	eps := []schema.PreflightEndpoint{{Endpoint: "a-0", Checks: []schema.PreflightCheck{
		{ID: "rdma-device", Status: schema.PreflightFail, Dooms: schema.DoomsRDMA},
		{ID: "binary-rping", Status: schema.PreflightSkip, Dooms: schema.DoomsTool},
		{ID: "binary-iperf3", Status: schema.PreflightPass},
	}}}
	if rows := PreflightRows(eps, false); len(rows) != 1 || rows[0][2] != "rdma-device" {
		t.Errorf("problems: %v", rows)
	}
	rows := PreflightRows(eps, true)
	if len(rows) != 3 || rows[1][0] != "SKIP" || rows[1][2] != "binary-rping" {
		t.Errorf("all: %v", rows)
	}
}
