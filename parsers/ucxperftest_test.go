package parsers

import (
	"os"
	"testing"
)

// TestUCXTransportEvidence: a real run with UCX_PROTO_INFO=y over UCX_TLS=tcp
// says it went over TCP on lo, and its Final line is read.
func TestUCXTransportEvidence(t *testing.T) {
	f, err := os.Open("../testdata/parsers/ucx_perftest/tag_bw_1k_proto_info_client.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := ParseUCXPerftest(f)
	if err != nil || len(ms) != 1 {
		t.Fatalf("%v, %v", ms, err)
	}
	m := ms[0]
	if !m.OK || m.Transport == nil || m.Transport.Kind != TransportTCP || len(m.Transport.Devices) != 1 || m.Transport.Devices[0] != "lo" {
		t.Fatalf("got ok=%v transport %+v", m.OK, m.Transport)
	}
	// Final:                 20000      0.612     4.541     4.541      215.04     215.04      220203      220203
	s := m.Samples[0]
	if s.Iterations != 20000 || *s.BWAvgBps != 215.04*mibPerSecBits || *s.MsgRatePPS != 220203 || s.LatAvgUS != nil {
		t.Errorf("sample %+v", s)
	}
}
