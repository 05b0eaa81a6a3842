package pathproof

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// Recorded in the soft-RoCE VMs around ib_write_bw -s 65536 -n 100.
const (
	rxeBefore = "port=1\nhw_counters/sent_pkts=0\nhw_counters/rcvd_pkts=0\n"
	rxeClient = "port=1\nhw_counters/sent_pkts=1600\nhw_counters/rcvd_pkts=100\n"
	rxeServer = "port=1\nhw_counters/sent_pkts=100\nhw_counters/rcvd_pkts=1600\n"
	mlx5      = "port=1\ncounters/port_xmit_data=%d\ncounters/port_rcv_data=10\ncounters/port_xmit_packets=5\ncounters/port_rcv_packets=7\nhw_counters/sent_pkts=1\n"
)

func parse(t *testing.T, s string) Counters {
	t.Helper()
	c, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseIBWords(t *testing.T) {
	c := parse(t, strings.Replace(mlx5, "%d", "1000", 1))
	if *c.TxBytes != 4000 || *c.RxBytes != 40 || *c.TxPackets != 5 || *c.RxPackets != 7 {
		t.Fatalf("%+v", c)
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := Parse(""); err == nil || !strings.Contains(err.Error(), "device name") {
		t.Errorf("empty: %v", err)
	}
	if _, err := Parse("port=1\nhw_counters/lifespan=10\n"); err == nil || !strings.Contains(err.Error(), "no readable traffic counters") {
		t.Errorf("no counters: %v", err)
	}
}

func TestVerifyRxeWriteBW(t *testing.T) {
	b := parse(t, rxeBefore)
	eps := []schema.PathCounters{Delta("client-0", "rxe0", b, parse(t, rxeClient)), Delta("server-0", "rxe0", b, parse(t, rxeServer))}
	p := Verify(eps, Expect{Bytes: 100 * 65536, Packets: PacketsFor(65536, 100, 4096)})
	if !p.Verified || p.Invalid || p.ToolPackets != 1600 {
		t.Fatalf("%+v", p)
	}
	if !strings.Contains(p.Detail, "client-0 rxe0 port 1 moved 1600 packets, the tool 1600 (100.0%)") {
		t.Errorf("detail: %s", p.Detail)
	}
}

func TestVerifyRule(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	cases := []struct {
		name              string
		e                 schema.PathCounters
		want              Expect
		verified, invalid bool
		words             string
	}{
		{"bytes agree", schema.PathCounters{TxBytes: n(1_050_000), RxBytes: n(1000)}, Expect{Bytes: 1_000_000}, true, false, "105.0%"},
		{"nothing crossed", schema.PathCounters{TxPackets: n(0), RxPackets: n(2)}, Expect{Bytes: 1 << 20, Packets: 256}, false, true, "did not cross"},
		{"short", schema.PathCounters{TxBytes: n(500_000)}, Expect{Bytes: 1_000_000}, false, false, "less than"},
		{"extra traffic", schema.PathCounters{TxBytes: n(50_000_000)}, Expect{Bytes: 1_000_000}, false, false, "other traffic"},
		{"unknown size, quiet", schema.PathCounters{TxPackets: n(3)}, Expect{}, false, true, "moved 3 packets"},
		{"unknown size, busy", schema.PathCounters{TxPackets: n(3000)}, Expect{}, false, false, "no byte count"},
		// Two rping pings moved 15 packets on soft-RoCE (the cross-rail
		// check's same-rail pairs): they crossed, though under the floor
		// of a leg that says nothing of its work.
		{"two pings crossed", schema.PathCounters{TxPackets: n(15), RxPackets: n(15)}, Expect{FloorPackets: PingFloor(2)}, false, false, "no byte count"},
		{"two pings, quiet device", schema.PathCounters{TxPackets: n(1)}, Expect{FloorPackets: PingFloor(2)}, false, true, "did not cross"},
		{"unreadable", schema.PathCounters{Error: "permission denied"}, Expect{Bytes: 1}, false, false, "permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.e.Endpoint, tc.e.Device, tc.e.Port = "e", "mlx5_0", 1
			p := Verify([]schema.PathCounters{tc.e}, tc.want)
			if p.Verified != tc.verified || p.Invalid != tc.invalid || !strings.Contains(p.Detail, tc.words) {
				t.Fatalf("got %+v", p)
			}
		})
	}
}

func TestDeltaBackwards(t *testing.T) {
	d := Delta("e", "d", parse(t, rxeClient), parse(t, rxeBefore))
	if d.TxPackets != nil || d.RxPackets != nil {
		t.Fatalf("a counter that went backwards must be unknown: %+v", d)
	}
}

func TestPacketsFor(t *testing.T) {
	if PacketsFor(65536, 100, 4096) != 1600 || PacketsFor(64, 200, 1024) != 200 || PacketsFor(5000, 2, 4096) != 4 || PacketsFor(1, 1, 0) != 0 {
		t.Fatal("PacketsFor")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(rxeClient)
	f.Fuzz(func(t *testing.T, s string) { _, _ = Parse(s) })
}

// A 32-bit PMA counter stuck at its maximum counts nothing: the leg is
// unproven, not invalid (its zero delta is no evidence), and the packet
// counters judge it when they still count.
func TestSaturatedCounterIsNotInvalid(t *testing.T) {
	sat := "port=1\ncounters/port_xmit_data=4294967295\ncounters/port_rcv_data=10\n"
	if c, err := Parse(sat); err == nil {
		t.Fatalf("saturated byte counters read: %+v", c)
	}
	satPkts := "port=1\ncounters/port_xmit_data=4294967295\ncounters/port_rcv_data=10\ncounters/port_xmit_packets=%d\ncounters/port_rcv_packets=0\n"
	b := parse(t, strings.Replace(satPkts, "%d", "0", 1))
	a := parse(t, strings.Replace(satPkts, "%d", "1000", 1))
	if b.TxBytes != nil || b.RxBytes != nil {
		t.Fatalf("byte counters kept beside a saturated one: %+v", b)
	}
	p := Verify([]schema.PathCounters{Delta("ep-0", "mlx4_0", b, a)}, Expect{Bytes: 4 << 20, Packets: 1000})
	if !p.Verified {
		t.Fatalf("packet counters should verify: %+v", p)
	}
}
