package tools

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// UCX drives EFA through its srd transport (UCX 1.19.0 on, RMA WRITE from
// 1.20.0: openucx/ucx src/uct/ib/efa/srd, NEWS): a ucx_perftest asking for
// it runs on EKS; one that does not is told which UCX and UCX_TLS serve.
func TestUCXOverEFA(t *testing.T) {
	srd := &scenarios.Test{Tool: scenarios.ToolUCXPerftest, Args: scenarios.Args{Transports: "srd,self"}}
	if why := SRDReason(srd, srd.Tool); why != "" {
		t.Errorf("UCX_TLS=srd refused on EFA: %s", why)
	}
	rc := &scenarios.Test{Tool: scenarios.ToolUCXPerftest, Args: scenarios.Args{Transports: "rc"}}
	why := SRDReason(rc, rc.Tool)
	for _, want := range []string{"1.19", "1.20", "srd"} {
		if !strings.Contains(why, want) {
			t.Errorf("reason %q does not say %s", why, want)
		}
	}
	if why := SRDReason(&scenarios.Test{Tool: scenarios.ToolUCXPerftest}, scenarios.ToolUCXPerftest); why == "" {
		t.Error("UCX with no transports named picks rc/ud on EFA: refused with the way out")
	}
}
