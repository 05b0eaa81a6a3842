package tools

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// rdmabench-nccl bounds itself with --time-limit (default 30m) and the
// builder never passes it: a leg the runner allows hours (a 1 MiB–16 GiB
// sweep of 1000 iterations: LegTimeout 19h) is killed by the probe itself
// at 30 minutes.
func TestAudit29NCCLProbeTimeLimitCoversTheLeg(t *testing.T) {
	test := scenarios.Test{Tool: "nccl_probe", Args: scenarios.Args{Collective: "all_reduce",
		MinSize: sz("1MiB"), MaxSize: sz("16GiB"), Iterations: 1000}}
	ep := endpoint.Endpoint{Name: "gpu-0", GPUs: 2}
	cmds := build(t, test, Leg{Client: ep, Server: ep, Ranks: []endpoint.Endpoint{ep}, Group: "g"})
	leg := LegTimeout(&test, 0, 0)
	if leg <= 30*time.Minute {
		t.Skipf("leg timeout %v within the probe's default", leg)
	}
	for _, c := range cmds {
		i := slices.Index(c.Argv, "--time-limit")
		if i < 0 || i+1 >= len(c.Argv) {
			t.Errorf("%s: no --time-limit, the probe stops at 30m while the leg may take %v: %s", c.Endpoint, leg, strings.Join(c.Argv, " "))
			continue
		}
		d, err := time.ParseDuration(c.Argv[i+1])
		if err != nil {
			if n, e := strconv.Atoi(c.Argv[i+1]); e == nil {
				d = time.Duration(n) * time.Second
			}
		}
		if d < leg {
			t.Errorf("--time-limit %s shorter than the leg's timeout %v", c.Argv[i+1], leg)
		}
	}
}
