// Package parsers turns the raw text printed by RDMA and collective benchmark
// tools into normalized measurements. Parsers are pure: they read text and
// return values, and know nothing of pods, processes or scenarios.
package parsers

import (
	"fmt"
	"slices"
	"strings"
)

// ErrorClass says why a run produced no usable measurement. A failed run is
// never reported as zeros; it carries one of these classes instead.
type ErrorClass string

// Error classes shared by every parser.
const (
	ClassNone              ErrorClass = ""
	ClassNoDevice          ErrorClass = "no_device"          // no RDMA/GPU device, device not found
	ClassConnectionFailed  ErrorClass = "connection_failed"  // peer unreachable, refused, rejected
	ClassTimeout           ErrorClass = "timeout"            // tool or harness timed out
	ClassDataError         ErrorClass = "data_error"         // wrong data, #wrong > 0, out of bounds values
	ClassToolError         ErrorClass = "tool_error"         // the tool reported an error of its own
	ClassUsageError        ErrorClass = "usage_error"        // bad command line
	ClassParameterMismatch ErrorClass = "parameter_mismatch" // server and client disagree
	ClassTruncated         ErrorClass = "truncated"          // output ends before any result
	ClassNoResults         ErrorClass = "no_results"         // the output holds no result table at all
	ClassTCPFallback       ErrorClass = "tcp_fallback"       // ran, but over TCP where RDMA was required
	ClassUnknownFormat     ErrorClass = "unknown_format"     // not output of the tool asked for
	ClassLauncher          ErrorClass = "launcher_error"     // the launcher (mpirun) refused or failed to start the ranks
	ClassClock             ErrorClass = "clock_error"        // the tool could not time itself: its figures are not measurements
)

// Measurement is what one tool run (one table of its output) measured.
// Bandwidths are bits per second, latencies microseconds, sizes bytes.
type Measurement struct {
	// Tool is the binary name that produced the output, e.g. "ib_write_bw".
	Tool string `json:"tool"`
	// OK is false when the run failed; ErrorClass and Error then say why.
	OK         bool       `json:"ok"`
	ErrorClass ErrorClass `json:"error_class,omitempty"`
	Error      string     `json:"error,omitempty"`

	// Side is "server", "client", "initiator", "rank0" … when the output says.
	Side string `json:"side,omitempty"`
	// Test is the tool's own name for what ran: "RDMA_Write BW Test",
	// "all_reduce_perf", "tag_bw" …
	Test string `json:"test,omitempty"`
	// Op is READ or WRITE for nixlbench.
	Op string `json:"op,omitempty"`
	// Backend is the NIXL backend (UCX, UCCL, LIBFABRIC …) for nixlbench.
	Backend string `json:"backend,omitempty"`
	// Pings counts completed rping round trips.
	Pings *int `json:"pings,omitempty"`
	// AvgBusBWBps is nccl-tests' "Avg bus bandwidth", in bits per second.
	AvgBusBWBps *float64 `json:"avg_busbw_bps,omitempty"`
	// Ranks is the number of ranks for collective tests.
	Ranks int `json:"ranks,omitempty"`
	// Version is the tool's version where its output states it.
	Version string `json:"version,omitempty"`
	// Info holds header facts worth keeping (device, link type, MTU, GID
	// index, connection type, QPs, data type …) as the tool printed them.
	Info map[string]string `json:"info,omitempty"`

	Samples []Sample `json:"samples"`
	// Unmeasured are rows the tool printed without a figure, left out of
	// Samples (perftest without a CPU clock rate): their sizes and
	// iterations say what crossed the wire, nothing more.
	Unmeasured []Sample `json:"unmeasured,omitempty"`

	// Transport is evidence of which transport actually carried the data.
	Transport *Transport `json:"transport,omitempty"`
	// Warnings are lines the tool printed that a reader should see
	// (CPU frequency warnings, UCX WARN lines, …).
	Warnings []string `json:"warnings,omitempty"`
}

// Sample is one row of a result table: one message size (and batch size).
// Pointer fields are absent when the tool does not give that figure.
type Sample struct {
	Bytes int64 `json:"bytes"`
	// Batch is how many items one timed call moved: nixlbench's
	// descriptors per transfer, the DeepEP probe's tokens per rank.
	Batch      int64 `json:"batch,omitempty"`
	Iterations int64 `json:"iterations,omitempty"`

	BWAvgBps     *float64 `json:"bw_avg_bps,omitempty"`
	BWPeakBps    *float64 `json:"bw_peak_bps,omitempty"`
	AggregateBps *float64 `json:"aggregate_bw_bps,omitempty"`
	NetworkUtil  *float64 `json:"network_util_pct,omitempty"`
	MsgRatePPS   *float64 `json:"msg_rate_pps,omitempty"`

	LatMinUS     *float64 `json:"lat_min_us,omitempty"`
	LatAvgUS     *float64 `json:"lat_avg_us,omitempty"`
	LatMaxUS     *float64 `json:"lat_max_us,omitempty"`
	LatTypicalUS *float64 `json:"lat_typical_us,omitempty"`
	LatStdevUS   *float64 `json:"lat_stdev_us,omitempty"`
	LatP99US     *float64 `json:"lat_p99_us,omitempty"`
	LatP999US    *float64 `json:"lat_p999_us,omitempty"`

	// nccl-tests: out-of-place figures in AlgBW/BusBW/TimeUS, in-place in
	// the Inplace* fields. Wrong counts mismatched elements (nil: not checked).
	TimeUS          *float64 `json:"time_us,omitempty"`
	AlgBWBps        *float64 `json:"algbw_bps,omitempty"`
	BusBWBps        *float64 `json:"busbw_bps,omitempty"`
	InplaceTimeUS   *float64 `json:"inplace_time_us,omitempty"`
	InplaceAlgBWBps *float64 `json:"inplace_algbw_bps,omitempty"`
	InplaceBusBWBps *float64 `json:"inplace_busbw_bps,omitempty"`
	Wrong           *int64   `json:"wrong,omitempty"`
	InplaceWrong    *int64   `json:"inplace_wrong,omitempty"`

	// nccl-tests row identity: -d all / -o all sweeps repeat sizes with another
	// data type or reduction, so a size alone does not name a row.
	Count    int64  `json:"count,omitempty"`
	DataType string `json:"type,omitempty"`
	RedOp    string `json:"redop,omitempty"`
	Root     *int   `json:"root,omitempty"`
	// MaxError and InplaceMaxError are the legacy (<= 2.11) "error" column:
	// the largest deviation seen, where newer versions count wrong elements.
	MaxError        *float64 `json:"max_error,omitempty"`
	InplaceMaxError *float64 `json:"inplace_max_error,omitempty"`

	// Phase and Rank name a row of a tool that reports one line per rank
	// and kernel phase (the DeepEP probe: Phase "low_latency dispatch
	// (FP8)", Rank 3, Batch the tokens per rank), where size alone would
	// merge ranks that moved the same bytes. Empty for other tools.
	Phase string `json:"phase,omitempty"`
	Rank  *int   `json:"rank,omitempty"`
}

// Transport kinds named by evidence.
const (
	TransportRDMA = "rdma"
	TransportTCP  = "tcp"
	TransportShm  = "shm"
	// TransportP2P is GPU peer-to-peer inside one host: NCCL's P2P
	// transport (NVLink or PCIe: "via P2P/CUMEM", "P2P/IPC", "P2P/direct
	// pointer") or NVLink SHARP (NVLS).
	TransportP2P = "p2p"
	// TransportNone is a single rank: nothing travels between GPUs, so no
	// transport carried anything (one-GPU nccl-tests).
	TransportNone    = "none"
	TransportUnknown = "unknown"
)

// Transport is the evidence, read from debug logs, of what carried the data:
// NCCL_DEBUG=INFO lines (NET/IB, NET/Socket) or UCX_PROTO_INFO tables.
type Transport struct {
	// Kind is rdma, tcp, shm, p2p (GPU peer-to-peer), none (one rank) or unknown.
	Kind string `json:"kind"`
	// Source is where the evidence came from: "nccl", "ucx", "perftest", "iperf3".
	Source string `json:"source,omitempty"`
	// Detail is the transport as the tool named it: "NET/IB", "NET/Socket",
	// "rc_mlx5", "tcp" …
	Detail string `json:"detail,omitempty"`
	// Devices are the NICs named, e.g. "mlx5_0:1/RoCE".
	Devices []string `json:"devices,omitempty"`
	// GDR is true when GPUDirect RDMA was reported enabled.
	GDR *bool `json:"gdr,omitempty"`
	// Copy is true when the data path copies through bounce buffers (UCX's
	// copy-in/copy-out protocols for remote memory access): the wire then
	// carries it in segments of the transport's size (UCX rc_verbs: 8256
	// bytes), not in whole messages cut at the MTU.
	Copy bool `json:"copy,omitempty"`
	// CopyRanges are the message sizes the copy applies to (UCX picks its
	// protocol by size: copy-in below 478 B and zero-copy above, say);
	// none with Copy set means every size.
	CopyRanges []ByteRange `json:"copyRanges,omitempty"`
	// Evidence holds the lines the verdict rests on (a few, not all).
	Evidence []string `json:"evidence,omitempty"`

	// Note says what a person should know of the path beyond its kind:
	// "UCX emulates READ … in software over tcp".
	Note string `json:"note,omitempty"`

	copyByOp map[string][]ByteRange // UCX's copy rows per op, until ForOp
	paths    map[string]*ucxPath    // UCX's RMA tables by op and memory, until ForPath
	control  string                 // UCX's other transports: "tcp (control)"
}

// ByteRange is a span of message sizes, both ends included; To -1 is no
// upper end.
type ByteRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// ForOp keeps the copies of the tool's op ("READ", "WRITE") only: a
// write's copy-in of small messages says nothing of how a read moves.
func (t *Transport) ForOp(op string) {
	if t == nil || t.copyByOp == nil {
		return
	}
	t.CopyRanges = t.copyByOp[op]
	t.Copy = len(t.CopyRanges) > 0
}

// ForOpMemories narrows the verdict, as ForPath, to the one RMA table of
// UCX's output whose op is op ("READ", "WRITE") and whose two sides are
// each one of mems ("cuda", "host"): a ucx_perftest -t ucp_get -m cuda
// read between GPUs is cuda_ipc, not the tcp that emulates the test's own
// host-to-GPU control writes beside it. It returns the path's key, or ""
// (the verdict left as it was) where no table, or more than one, fits.
func (t *Transport) ForOpMemories(op string, mems []string) string {
	if t == nil {
		return ""
	}
	var fit []string
	for key := range t.paths {
		o, rest, _ := strings.Cut(key, " ")
		a, b, ok := strings.Cut(rest, "<-")
		if !ok {
			a, b, _ = strings.Cut(rest, "->")
		}
		if o == op && slices.Contains(mems, a) && slices.Contains(mems, b) {
			fit = append(fit, key)
		}
	}
	if len(fit) != 1 {
		return ""
	}
	t.ForPath(fit[0])
	return fit[0]
}

// ForPath narrows the verdict to the tool's own data path (UCXPathKey:
// op and memory of each side) where UCX's tables show it: a VRAM WRITE
// over cuda_ipc is not judged by the tcp row of a host-memory read. A
// path UCX emulates in software is said so in Note.
func (t *Transport) ForPath(key string) {
	if t == nil {
		return
	}
	op, _, _ := strings.Cut(key, " ")
	t.ForOp(op)
	p := t.paths[key]
	if p == nil || len(p.tls) == 0 {
		return
	}
	t.Kind, t.Devices = TransportUnknown, nil
	for _, k := range ucxKindRank {
		for tl := range p.tls {
			if ucxTLKind[tl] == k {
				t.Kind = k
			}
		}
		if t.Kind != TransportUnknown {
			break
		}
	}
	if t.Kind != TransportShm && t.Kind != TransportP2P {
		t.Devices = p.devs
	}
	t.Detail = trJoin(p.tls) + " (" + key + ")"
	if t.control != "" {
		t.Detail += ", " + t.control
	}
	if p.emulated != "" {
		t.Detail = "software emulation over " + p.emulated + " (" + key + ")"
		t.Note = fmt.Sprintf("UCX has no zero-copy protocol for %s here and emulates it in software over %s", key, p.emulated)
		if strings.Contains(key, "cuda<-cuda") {
			t.Note += " (cuda_ipc offers no get_zcopy where GPU 0 has no NVLink: UCX_CUDA_IPC_ENABLE_GET_ZCOPY=y turns it on)"
		}
	}
	// The path's own rows first, then the rest, each line once.
	evidence := append([]string(nil), p.evidence...)
	for _, e := range t.Evidence {
		if len(evidence) < 8 && !slices.Contains(evidence, e) {
			evidence = append(evidence, e)
		}
	}
	t.Evidence = evidence
}

// CopiesAt says whether a message of size bytes goes through the copy.
func (t *Transport) CopiesAt(size int64) bool {
	if t == nil || !t.Copy {
		return false
	}
	if len(t.CopyRanges) == 0 {
		return true
	}
	for _, r := range t.CopyRanges {
		if size >= r.From && (r.To < 0 || size <= r.To) {
			return true
		}
	}
	return false
}

// F returns a pointer to v; samples use pointers so that "absent" differs from 0.
func F(v float64) *float64 { return &v }
