// Package pathproof proves the path of a leg: the RDMA port counters of
// each endpoint's device, read before and after the leg, against the bytes
// the tool says it moved. A leg whose traffic did not cross the device the
// test names (TCP fallback, wrong rail, another NIC) is invalid; one whose
// counters agree with the tool is verified. Reading is one short shell
// command (Script); parsing, deltas and the rule are pure.
package pathproof

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
)

// Counter files read under /sys/class/infiniband/DEV/ports/N/. The IB
// port counters (PMA: mlx5, IB HCAs) count port_xmit_data and
// port_rcv_data in 4-byte words; rxe has no PMA counters, only
// hw_counters/sent_pkts and rcvd_pkts (packets, RoCE v2, without CM).
var files = []string{
	"counters/port_xmit_data", "counters/port_rcv_data",
	"counters/port_xmit_packets", "counters/port_rcv_packets",
	"hw_counters/sent_pkts", "hw_counters/rcvd_pkts",
}

// Script prints "port=N" and "FILE=value" for each port of dev: the
// traffic counters, the health counters the driver has, and the PFC and
// discard statistics of the port's network interface (ethtool/NAME=value).
func Script(dev string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "for P in /sys/class/infiniband/%s/ports/*; do [ -d \"$P\" ] || continue; echo \"port=${P##*/}\"; for f in %s; do [ -r \"$P/$f\" ] && echo \"$f=$(cat \"$P/$f\" 2>/dev/null)\"; done; %s; done; true",
		dev, strings.Join(append(slices.Clip(files), healthFiles()...), " "), ethtoolScript())
	return b.String()
}

// Counters is one reading of a device port's counters; nil: not counted.
// Health holds the congestion and loss counters read, by Script's key.
type Counters struct {
	Port                 int
	TxBytes, RxBytes     *int64
	TxPackets, RxPackets *int64
	Health               map[string]int64
}

// Parse reads Script's output: the first port's counters (an RDMA device
// in a test has one port in use; rxe and mlx5 functions have one).
func Parse(out string) (Counters, error) {
	var c Counters
	seen := false
	var satBytes, satPkts bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		if k == "port" {
			if seen {
				break
			}
			seen = true
			c.Port, _ = strconv.Atoi(v)
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/4 {
			continue
		}
		if strings.HasPrefix(k, "counters/") && n == math.MaxUint32 {
			// A 32-bit PMA counter (an HCA without extended counters)
			// stops at its maximum and no longer counts: its zero delta,
			// or the other direction alone (the acknowledgements), would
			// pass for traffic that missed the device. Neither direction
			// of that kind is read.
			if strings.HasSuffix(k, "_data") {
				satBytes = true
			} else {
				satPkts = true
			}
			continue
		}
		if isHealth(k) {
			if c.Health == nil {
				c.Health = map[string]int64{}
			}
			c.Health[k] = n
			continue
		}
		switch k {
		case "counters/port_xmit_data":
			c.TxBytes = ptr(n * 4)
		case "counters/port_rcv_data":
			c.RxBytes = ptr(n * 4)
		case "counters/port_xmit_packets":
			c.TxPackets = ptr(n)
		case "counters/port_rcv_packets":
			c.RxPackets = ptr(n)
		case "hw_counters/sent_pkts":
			if c.TxPackets == nil {
				c.TxPackets = ptr(n)
			}
		case "hw_counters/rcvd_pkts":
			if c.RxPackets == nil {
				c.RxPackets = ptr(n)
			}
		}
	}
	if satBytes {
		c.TxBytes, c.RxBytes = nil, nil
	}
	if satPkts {
		c.TxPackets, c.RxPackets = nil, nil
	}
	if !seen {
		return c, fmt.Errorf("no ports listed (is the device name right?)")
	}
	if c.TxBytes == nil && c.RxBytes == nil && c.TxPackets == nil && c.RxPackets == nil {
		return c, fmt.Errorf("port %d has no readable traffic counters (counters/port_xmit_data, hw_counters/sent_pkts)", c.Port)
	}
	return c, nil
}

func ptr(n int64) *int64 { return &n }

// Delta is what crossed an endpoint's device between two readings.
func Delta(endpoint, device string, before, after Counters) schema.PathCounters {
	d := schema.PathCounters{Endpoint: endpoint, Device: device, Port: after.Port}
	d.TxBytes, d.RxBytes = sub(before.TxBytes, after.TxBytes), sub(before.RxBytes, after.RxBytes)
	d.TxPackets, d.RxPackets = sub(before.TxPackets, after.TxPackets), sub(before.RxPackets, after.RxPackets)
	d.Health = healthDelta(before.Health, after.Health)
	markHealth(&d)
	return d
}

// sub is after − before; a counter that went backwards (reset, 32-bit
// wrap) is unknown rather than a huge figure.
func sub(b, a *int64) *int64 {
	if a == nil || b == nil || *a < *b {
		return nil
	}
	return ptr(*a - *b)
}

// Tolerance of the verify rule: the counters must show at least
// LowerFrac of the tool's payload (counter granularity) and at most
// UpperFrac of it plus UpperSlack (headers, acknowledgements, retries,
// warm-up, connection set-up). Below InvalidFrac the traffic did not cross
// the device.
const (
	LowerFrac        = 0.98
	UpperFrac        = 1.25
	UpperSlackBytes  = 1 << 20
	UpperSlackPkts   = 1024
	InvalidFrac      = 0.10
	InvalidFloorPkts = 16 // a leg of unknown size moved fewer than this: nothing crossed
)

// Expect is what the tool says it moved: payload bytes and the packets
// that needs at the path MTU; 0 when the tool does not say.
type Expect struct {
	Bytes, Packets int64
	// FloorPackets, where the tool says no size but how much work it
	// completed (rping's pings), is the least a device that carried it
	// moved; 0: InvalidFloorPkts.
	FloorPackets int64
}

// PingFloor is the least packets an RDMA device moves for n completed
// rping pings, on either side: each ping is three SENDs, an RDMA READ and
// an RDMA WRITE between the two (about 7 packets a side were seen on
// soft-RoCE for a ping), so 3 a ping is a floor with room.
func PingFloor(n int) int64 { return min(int64(3*n), InvalidFloorPkts) }

// PacketsFor is the packets a payload of iterations messages of size
// bytes needs at mtu (RC: one packet per MTU, at least one per message).
func PacketsFor(size, iterations int64, mtu int) int64 {
	if size <= 0 || iterations <= 0 || mtu <= 0 {
		return 0
	}
	return iterations * ((size + int64(mtu) - 1) / int64(mtu))
}

// PacketsForSegments is PacketsFor when the transport copies each message
// in segments of seg bytes (UCX's copy-out): every segment is cut at the
// MTU of its own, so a message takes more packets than its size needs.
func PacketsForSegments(size, iterations int64, mtu int, seg int64) int64 {
	if seg <= 0 || seg >= size {
		return PacketsFor(size, iterations, mtu)
	}
	full, rest := size/seg, size%seg
	per := full * PacketsFor(seg, 1, mtu)
	if rest > 0 {
		per += PacketsFor(rest, 1, mtu)
	}
	return iterations * per
}

// Verify applies the rule to every endpoint's deltas. Each endpoint's
// device must have carried the traffic in one direction or the other
// (max of tx and rx: a writer sends, its target receives).
func Verify(eps []schema.PathCounters, want Expect) schema.PathProof {
	p := schema.PathProof{Endpoints: eps, ToolBytes: want.Bytes, ToolPackets: want.Packets}
	if len(eps) == 0 {
		p.Detail = "no counters read"
		return p
	}
	verified := true
	var notes []string
	for _, e := range eps {
		v, invalid, note := judgeOne(e, want)
		verified = verified && v
		p.Invalid = p.Invalid || invalid
		notes = append(notes, note)
	}
	p.Verified = verified && !p.Invalid
	p.Detail = strings.Join(notes, "; ")
	Health(&p)
	return p
}

func judgeOne(e schema.PathCounters, want Expect) (verified, invalid bool, note string) {
	where := fmt.Sprintf("%s %s port %d", e.Endpoint, e.Device, e.Port)
	if e.Error != "" {
		return false, false, where + ": " + e.Error
	}
	moved, unit, expect, slack := movedOf(e, want)
	if moved < 0 {
		return false, false, where + ": no traffic counters"
	}
	if expect <= 0 {
		floor := int64(InvalidFloorPkts)
		if want.FloorPackets > 0 {
			floor = want.FloorPackets
		}
		if unit == "packets" && moved < floor || unit == "bytes" && moved < floor*64 {
			return false, true, fmt.Sprintf("%s moved %d %s: the traffic did not cross %s", where, moved, unit, e.Device)
		}
		return false, false, fmt.Sprintf("%s moved %d %s (the tool reports no byte count to compare)", where, moved, unit)
	}
	ratio := float64(moved) / float64(expect)
	fig := fmt.Sprintf("%s moved %d %s, the tool %d (%.1f%%)", where, moved, unit, expect, 100*ratio)
	switch {
	case ratio < InvalidFrac:
		return false, true, fig + ": the traffic did not cross " + e.Device
	case ratio < LowerFrac:
		return false, false, fig + ": less than the tool's payload"
	case float64(moved) > UpperFrac*float64(expect)+float64(slack):
		return false, false, fig + ": more than the tool's traffic (other traffic on the device?)"
	}
	return true, false, fig
}

// movedOf is the larger direction in bytes where the device counts bytes,
// else in packets; the expectation and slack in the same unit; -1 when
// nothing was counted.
func movedOf(e schema.PathCounters, want Expect) (moved int64, unit string, expect, slack int64) {
	if e.TxBytes != nil || e.RxBytes != nil {
		return maxOf(e.TxBytes, e.RxBytes), "bytes", want.Bytes, UpperSlackBytes
	}
	if e.TxPackets != nil || e.RxPackets != nil {
		return maxOf(e.TxPackets, e.RxPackets), "packets", want.Packets, UpperSlackPkts
	}
	return -1, "", 0, 0
}

func maxOf(a, b *int64) int64 {
	var m int64
	if a != nil {
		m = *a
	}
	if b != nil && *b > m {
		m = *b
	}
	return m
}
