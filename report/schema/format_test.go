package schema

import (
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
)

// The transport badge says "TCP fallback" only where RDMA was required.
func TestTransportLabel(t *testing.T) {
	one := []parsers.Sample{{Bytes: 65536}}
	tcp, rdma := &parsers.Transport{Kind: "tcp"}, &parsers.Transport{Kind: "rdma"}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"rdma", Result{Tool: "ib_write_bw", Requires: "rdma", Transport: rdma, Samples: one}, "RDMA"},
		{"tcp where rdma was required", Result{Tool: "nixlbench", Backend: "UCX", Requires: "rdma", Transport: tcp, Samples: one}, "TCP fallback"},
		{"tcp asked for", Result{Tool: "ucx_perftest", Backend: "tcp", Requires: "tcp", Transport: tcp, Samples: one}, "TCP"},
		{"no evidence", Result{Tool: "ucx_perftest", Backend: "rc_verbs", Requires: "rdma", Samples: one}, "unknown"},
		{"nothing ran", Result{Tool: "ib_write_bw", Requires: "rdma", Verdict: VerdictSkipped}, ""},
		{"fallback class without evidence", Result{Tool: "nixlbench", ErrorClass: "tcp_fallback"}, "TCP fallback"},
		// Reports written before Requires existed (v1): the scenario default is
		// inferred when they are loaded (Upgrade).
		{"old report, UCX_TLS=tcp", Result{Tool: "ucx_perftest", Backend: "tcp", Transport: tcp, Samples: one}, "TCP"},
		{"old report, UCX_TLS=tcp,sm,self", Result{Tool: "ucx_perftest", Backend: "tcp,sm,self", Transport: tcp, Samples: one}, "TCP"},
		{"old report, iperf3", Result{Tool: "iperf3", Transport: tcp, Samples: one}, "TCP"},
		{"old report, UCX_TLS=rc_x,tcp fell back", Result{Tool: "ucx_perftest", Backend: "rc_x,tcp", Transport: tcp, Samples: one}, "TCP fallback"},
		{"old report, nixlbench fell back", Result{Tool: "nixlbench", Backend: "UCX", Transport: tcp, Samples: one}, "TCP fallback"},
	} {
		if tc.r.Family == "" { // an old report: loading upgrades it
			UpgradeResult(&tc.r)
		}
		if got := tc.r.TransportLabel(); got != tc.want {
			t.Errorf("%s: TransportLabel() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
