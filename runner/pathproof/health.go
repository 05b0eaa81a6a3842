package pathproof

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
)

// The health counters: congestion and loss, beside the bytes. Each is read
// where the device has it (sysfs hw_counters of mlx5 and of rxe; ethtool -S
// of the device's network interface) and its delta over the leg reported;
// none of them decides the verdict, they say why a figure is low.
//
// Congestion: the switch marked packets (ECN) and the receiver asked the
// sender to slow down (CNP), or a port paused a priority (PFC). Loss:
// packets dropped or arriving out of order, so the sender went back and sent
// again (go-back-N); on a lossless RoCE fabric any of these is a fault.
var (
	// congestionHW are mlx5's congestion counters (drivers/infiniband/hw/mlx5/counters.c).
	congestionHW = []string{"np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets"}
	// lossHW are mlx5's and rxe's loss counters (rxe: drivers/infiniband/sw/rxe/rxe_hw_counters.c).
	lossHW = []string{
		"out_of_buffer", "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err", "duplicate_request", // mlx5 (duplicate_request: rxe too)
		"out_of_seq_request", "rcvd_seq_err", "retry_exceeded_err", "completer_retry_err", // rxe
	}
)

// ethtoolCase is the sh case pattern of the ethtool -S statistics read:
// mlx5e's per-priority PFC pause frames and discards, and the port's discards
// (Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst).
const ethtoolCase = "rx_prio[0-7]_pause|tx_prio[0-7]_pause|rx_prio[0-7]_discards|rx_prio[0-7]_buf_discard|rx_prio[0-7]_cong_discard|rx_discards_phy|tx_discards_phy|rx_pause_ctrl_phy|tx_pause_ctrl_phy"

// healthFiles are the hw_counters files read for health.
func healthFiles() []string {
	var out []string
	for _, n := range slices.Concat(congestionHW, lossHW) {
		out = append(out, "hw_counters/"+n)
	}
	return out
}

// ethtoolScript prints "ethtool/NAME=value" for the health statistics of the
// port's network interface (its GID table's netdev), where ethtool is there.
func ethtoolScript() string {
	return `N=$(cat "$P/gid_attrs/ndevs/0" 2>/dev/null); ` +
		`if [ -n "$N" ] && command -v ethtool >/dev/null 2>&1; then ethtool -S "$N" 2>/dev/null | while IFS=': ' read -r k v; do case "$k" in ` +
		ethtoolCase + `) echo "ethtool/$k=$v";; esac; done; fi`
}

// isHealth says whether a key of Script's output is a health counter.
func isHealth(k string) bool {
	if strings.HasPrefix(k, "ethtool/") {
		return true
	}
	name, ok := strings.CutPrefix(k, "hw_counters/")
	return ok && (slices.Contains(congestionHW, name) || slices.Contains(lossHW, name))
}

// healthKind is "congested" or "lossy" for a health counter's key.
func healthKind(k string) string {
	name := k[strings.LastIndex(k, "/")+1:]
	switch {
	case slices.Contains(congestionHW, name), strings.HasSuffix(name, "_pause"), strings.HasSuffix(name, "_pause_ctrl_phy"):
		return "congested"
	default:
		return "lossy"
	}
}

// healthDelta is after − before of every health counter read both times.
func healthDelta(before, after map[string]int64) map[string]int64 {
	var d map[string]int64
	for k, a := range after {
		b, ok := before[k]
		if !ok || a < b {
			continue
		}
		if d == nil {
			d = map[string]int64{}
		}
		d[k] = a - b
	}
	return d
}

// markHealth names the counters of an endpoint's delta that moved, by kind.
func markHealth(e *schema.PathCounters) {
	for _, k := range sortedKeys(e.Health) {
		if e.Health[k] == 0 {
			continue
		}
		if healthKind(k) == "congested" {
			e.Congested = append(e.Congested, k)
		} else {
			e.Lossy = append(e.Lossy, k)
		}
	}
}

// Health sets the proof's health: "congested", "lossy" or both when a
// counter moved, "clean" when some were read and none moved, "" when the
// devices have none; HealthDetail names the counters and their deltas.
func Health(p *schema.PathProof) {
	read, congested, lossy := false, false, false
	var notes []string
	for _, e := range p.Endpoints {
		read = read || len(e.Health) > 0
		congested = congested || len(e.Congested) > 0
		lossy = lossy || len(e.Lossy) > 0
		var moved []string
		for _, k := range slices.Concat(e.Congested, e.Lossy) {
			moved = append(moved, fmt.Sprintf("%s +%d", k, e.Health[k]))
		}
		if len(moved) > 0 {
			notes = append(notes, fmt.Sprintf("%s %s: %s", e.Endpoint, e.Device, strings.Join(moved, ", ")))
		}
	}
	switch {
	case congested && lossy:
		p.Health = schema.HealthCongestedLossy
	case congested:
		p.Health = schema.HealthCongested
	case lossy:
		p.Health = schema.HealthLossy
	case read:
		p.Health = schema.HealthClean
	}
	p.HealthDetail = strings.Join(notes, "; ")
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
