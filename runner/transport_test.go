package runner

import (
	"os"
	"strings"
	"testing"
)

// TestParseAddsTransport: real soft-RoCE outputs (testdata/softroce) get
// RDMA evidence from perftest's header, and UCX over TCP gets tcp evidence
// from UCX's own ep_cfg line.
func TestParseAddsTransport(t *testing.T) {
	b, err := os.ReadFile("../testdata/softroce/ib_write_bw_64k_client.txt")
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseWithParsers("ib_write_bw", strings.NewReader(string(b)))
	if err != nil || m.Transport == nil || m.Transport.Kind != "rdma" || m.Transport.Source != "perftest" || m.Transport.Detail != "RoCE RC" {
		t.Fatalf("ib_write_bw transport %+v %v", m.Transport, err)
	}
	ucx := "[1795242320.158531] [vm2:216  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[0]: tag(tcp/eth0)\n" +
		"Final:                   300    0.000  2597.460  2597.460       24.06      24.06         385         385\n"
	m, err = parseWithParsers("ucx_perftest", strings.NewReader(ucx))
	if err != nil || m.Transport == nil || m.Transport.Kind != "tcp" {
		t.Fatalf("ucx_perftest transport %+v %v", m.Transport, err)
	}
}
