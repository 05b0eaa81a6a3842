package parsers

import (
	"math"
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

// Between the soft-RoCE VMs as kube nodes (make e2e-nodes, UCX 1.13.1
// from Debian, put_bw over rc_verbs, 2026-11-25) ucx_perftest's last
// interval took no measurable time and its Final line printed "inf" for
// the interval's average latency: the overall figures, which are what
// rdmabench reads, stand.
func TestUCXFinalLineWithInfiniteAverage(t *testing.T) {
	p := &ucxParser{table: &ucxTable{}, size: 65536}
	if !p.row("[thread 0]               300  70689.000 69051.329 69841.247        0.91       0.89          14          14") {
		t.Fatal("progress line not read")
	}
	if !p.row("Final:                   300  70689.000       inf 70077.116        0.00       0.89          14          14") {
		t.Fatal("Final line not read")
	}
	if len(p.out) != 1 || len(p.out[0].Samples) != 1 {
		t.Fatalf("measurements %+v", p.out)
	}
	f := p.out[0].Samples[0]
	if f.Iterations != 300 || *f.MsgRatePPS != 14 || math.Abs(*f.BWAvgBps-0.89*mibPerSecBits) > 1 {
		t.Fatalf("final %+v", f)
	}
	p.table = &ucxTable{}
	if p.row("Final:                   300  70689.000 70000.0   inf        0.00       0.89          14          14") {
		t.Error("an overall figure that is not finite was read")
	}
}
