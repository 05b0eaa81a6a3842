package preflight

import (
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

func TestMemlockNeed(t *testing.T) {
	for _, tc := range []struct {
		t    scenarios.Test
		want int64
	}{
		{scenarios.Test{Tool: "ib_write_bw", Args: scenarios.Args{Sweep: true}}, 20 << 10},
		{scenarios.Test{Tool: "ib_write_bw", Args: scenarios.Args{Sizes: []scenarios.Size{{Bytes: 1 << 20}}, QPs: 4}}, 12 << 10},
		{scenarios.Test{Tool: "ib_write_bw"}, 4096 + 128},
		{scenarios.Test{Tool: "nixlbench"}, DefaultMinMemlockKiB},
	} {
		if got := memlockNeedKiB(&tc.t, tc.t.Tool); got != tc.want {
			t.Errorf("%s %+v: %d KiB, want %d", tc.t.Tool, tc.t.Args, got, tc.want)
		}
	}
}
