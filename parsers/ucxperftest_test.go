package parsers

import (
	"os"
	"strings"
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

// TestUCXSeveralRuns: two client captures one after the other give two
// measurements, the latency one with latency figures.
func TestUCXSeveralRuns(t *testing.T) {
	a, _ := os.ReadFile("../testdata/parsers/ucx_perftest/tag_bw_64k_client.txt")
	b, _ := os.ReadFile("../testdata/parsers/ucx_perftest/tag_lat_8_client.txt")
	ms, err := ParseUCXPerftest(strings.NewReader(string(a) + string(b)))
	if err != nil || len(ms) != 2 || !ms[0].OK || !ms[1].OK {
		t.Fatalf("%+v, %v", ms, err)
	}
	if ms[0].Samples[0].LatAvgUS != nil || ms[1].Samples[0].LatAvgUS == nil || ms[1].Samples[0].LatTypicalUS == nil {
		t.Errorf("latency figures: bw run %+v, lat run %+v", ms[0].Samples[0], ms[1].Samples[0])
	}
}
