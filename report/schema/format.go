package schema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/units"
)

// IsCollective reports whether a result is of nccl-tests (its family).
func (r *Result) IsCollective() bool { return tool.IsCollective(r.Family) }

// FormatBandwidth renders bps in the unit a family's readers expect:
// collectives in bytes per second (GB/s), as nccl-tests prints them and as
// people who tune NCCL read them; NIC tools in bits per second (Gb/s), to
// sit beside the line rate.
func FormatBandwidth(f parsers.Family, bps float64) string {
	if _, unit := tool.DisplayUnit(tool.FamilyMetric(f)); unit == "GB/s" {
		return units.FormatByteRate(bps)
	}
	return units.FormatRate(bps)
}

// Label is Pair with the variant, when the runner split a pair's work into
// variants (one leg per message size): "a → b [65536]".
func (r *Result) Label() string {
	if r.Variant == "" {
		return r.Pair()
	}
	return r.Pair() + " [" + r.Variant + "]"
}

// Pair names a result's endpoints for tables and charts: "a → b", or the
// rank count of a collective.
func (r *Result) Pair() string {
	switch {
	case r.From != "" && r.To != "":
		return r.From + " → " + r.To
	case len(r.Ranks) > 0:
		return r.RankLabel()
	case r.From != "":
		return r.From
	}
	return r.To
}

// RankLabel is "N ranks" (or "1 rank") for a collective: its GPUs summed
// over its endpoints where the run recorded them, else one per endpoint.
func (r *Result) RankLabel() string {
	n := r.NRanks
	if n <= 0 {
		n = len(r.Ranks)
	}
	if n == 1 {
		return "1 rank"
	}
	return fmt.Sprintf("%d ranks", n)
}

// VerdictRank orders verdicts by severity, worst first: a shortfall of
// the fabric, then a harness failure, then what did not run (a skipped
// test is something to fix before the run says all it could), then passes.
func VerdictRank(v string) int {
	switch v {
	case VerdictInvalid:
		return 0
	case VerdictFail:
		return 0
	case VerdictError:
		return 1
	case VerdictSkipped:
		return 2
	case VerdictPass:
		return 3
	}
	return 4
}

// EfficiencyKey sorts missing efficiencies after known ones.
func EfficiencyKey(r *Result) float64 {
	if r.Efficiency == nil {
		return 1e18
	}
	return *r.Efficiency
}

// WorstFirst returns the indexes of rs ordered worst first: by verdict, then
// efficiency ascending, then test and pair so that the order is stable.
func WorstFirst(rs []Result) []int {
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := &rs[idx[a]], &rs[idx[b]]
		if rx, ry := VerdictRank(x.Verdict), VerdictRank(y.Verdict); rx != ry {
			return rx < ry
		}
		if ex, ey := EfficiencyKey(x), EfficiencyKey(y); ex != ey {
			return ex < ey
		}
		if x.Test != y.Test {
			return x.Test < y.Test
		}
		return x.Pair() < y.Pair()
	})
	return idx
}

// Headline is a result's one figure for tables: best bandwidth, or the
// smallest size's average latency for latency-only tools.
func (r *Result) Headline() string {
	if r.BestBps > 0 {
		s := FormatBandwidth(r.Family, r.BestBps)
		if r.BestBytes > 0 {
			s += " @" + units.FormatSize(r.BestBytes)
		}
		return s
	}
	for _, s := range r.Samples {
		if s.LatAvgUS != nil {
			return fmt.Sprintf("%s lat @%s", FormatMicros(*s.LatAvgUS), units.FormatSize(s.Bytes))
		}
		if s.LatTypicalUS != nil {
			return fmt.Sprintf("%s lat @%s", FormatMicros(*s.LatTypicalUS), units.FormatSize(s.Bytes))
		}
	}
	return "-"
}

// FormatMicros renders a latency given in microseconds: "1.92 µs", "3.10 ms".
func FormatMicros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2f ms", us/1e3)
	}
	return fmt.Sprintf("%.2f µs", us)
}

// FormatEfficiency renders a percent of line rate, "-" when unknown.
func FormatEfficiency(e *float64) string {
	if e == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *e)
}

// TransportLabel is a result's transport badge: "RDMA", "TCP fallback"
// (TCP where the test did not ask for it), "TCP" (asked for), "shm", "GPU
// P2P" (NVLink or PCIe peer-to-peer: NCCL's P2P, NVLS), "none (1 rank)" or
// "unknown"; "" when nothing was measured.
func (r *Result) TransportLabel() string {
	if r.Transport == nil && len(r.Samples) == 0 && r.ErrorClass != "tcp_fallback" {
		return "" // nothing ran: no transport to speak of
	}
	if r.Transport == nil {
		if r.ErrorClass == "tcp_fallback" {
			return "TCP fallback"
		}
		return "unknown"
	}
	switch r.Transport.Kind {
	case "rdma":
		return "RDMA"
	case "tcp":
		if r.Requires == "tcp" {
			return "TCP"
		}
		return "TCP fallback"
	case "shm":
		return "shm"
	case "p2p":
		return "GPU P2P"
	case "none":
		return "none (1 rank)"
	}
	return "unknown"
}

// FormatSizeShort renders sizes for axes: 4K, 1M, 2G (binary), 1536B.
func FormatSizeShort(b int64) string {
	for _, u := range []struct {
		n    int64
		name string
	}{{1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}} {
		if b >= u.n && b%u.n == 0 {
			return fmt.Sprintf("%d%s", b/u.n, u.name)
		}
	}
	return fmt.Sprintf("%dB", b)
}

// NaturalLess sorts "ep-2" before "ep-10".
func NaturalLess(a, b string) bool {
	ia, ib := trailingNumber(a), trailingNumber(b)
	pa, pb := strings.TrimRight(a, "0123456789"), strings.TrimRight(b, "0123456789")
	if pa == pb && ia >= 0 && ib >= 0 {
		return ia < ib
	}
	return a < b
}

func trailingNumber(s string) int {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) {
		return -1
	}
	n, _ := strconv.Atoi(s[i:])
	return n
}
