// Package tools describes every benchmark tool rdmabench drives, once: its
// family, the binaries it needs, whether it needs an RDMA device, how to
// build its command lines from a test's arguments, how to tell its server
// is ready, which side's output holds the result, which parser reads it,
// what its headline metric is, how to install it and how long a run may
// take.
//
// The table is explicit code (the table variable below): adding a tool
// means one file here that defines its Spec, one line in the table, one
// parser (package parsers) and, where the real tool cannot run in CI, one
// stand-in (testdata/standins); docs/development/adding-a-tool.md walks
// through it. Nothing is registered at init time, and the lists elsewhere
// (scenarios.Tools, the parsers' families) are checked against this table
// by TestEveryListMatchesTheToolTable.
package tools

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Spec is everything the planner, the runner, the judge and the report
// need to know about a tool.
type Spec struct {
	// Name is the tool as scenarios write it (ib_write_bw, nccl, …).
	Name string
	// Family is the group of tools that share a command-line shape, a
	// rendezvous and a parser; every result in report.json carries it.
	Family parsers.Family
	// Binaries must exist on every endpoint that runs the tool. For nccl
	// the collective picks the binary; Binaries lists the default.
	Binaries []string
	// NeedsRDMA is true when the tool cannot run without an RDMA device
	// (a test may still say requires: tcp, e.g. nixlbench over UCX_TLS=tcp).
	NeedsRDMA bool
	// Parser is the tool name handed to the parsers package.
	Parser string
	// Metric is the headline figure, carried by every result: bandwidths
	// are held against the line rate. MetricOf refines it by a test's
	// arguments.
	Metric parsers.Metric
	// DefaultPort is the tool's own default rendezvous port; the planner
	// counts up from it for concurrent jobs. 0 when the tool has none.
	DefaultPort int
	// Install says how to get the binary when it is missing.
	Install string
	// SelectsTransport is true when a test chooses the tool's transport
	// (args.transports: UCX_TLS), so that TCP needs no RDMA device.
	SelectsTransport bool
	// Transport is the transport the tool can only use, when it has one
	// (iperf3: TCP, rping: RDMA CM): a result whose output names none
	// carries it.
	Transport *parsers.Transport
	// Image is the image that provides the binaries in a pod.
	Image Image
	// Directional tools run only from→to (nixlbench: the from side is
	// the initiator); the planner adds no reverse legs across pools.
	Directional bool

	// build appends the commands of one leg to dst, servers (or the first
	// rank) first, each with its readiness signal (Ready*).
	build func(dst []Command, spec *Spec, leg *Leg) ([]Command, error)
	// work is how long the tool itself may take for a leg of size bytes
	// (0: the test's own sizes); LegTimeout adds the start-up margin.
	work func(spec *Spec, t *scenarios.Test, size int64) time.Duration
	// metricOf refines Metric by a test's arguments; nil keeps Metric.
	metricOf func(t *scenarios.Test) parsers.Metric
	// probes are the checks of the tool's build a test needs (preflight);
	// nil when a present binary is all it takes.
	probes func(t *scenarios.Test) []Probe
	// messages is how many messages of a sample's size the tool put on
	// the wire for it, warm-up included (the path proof's expectation);
	// nil: the sample's own iterations, else the test's.
	messages func(m *parsers.Measurement, s *parsers.Sample) int64
	// pinnedKiB estimates the memory a test registers (memlock), for
	// preflight; nil when the tool pins more than its messages (NCCL,
	// NIXL: preflight's default applies).
	pinnedKiB func(t *scenarios.Test) int64
	// overSRD says whether a test of the tool can run over SRD, the only
	// reliable transport of AWS EFA ("" yes, else why not); nil: it can.
	overSRD func(t *scenarios.Test) string
}

// SRDReason is why a test cannot run over AWS EFA, whose reliable
// transport is SRD (Scalable Reliable Datagram), not RC: "" when it can
// (a test that needs no RDMA, perftest with connection SRD or UD, NCCL
// through aws-ofi-nccl, nixlbench over LIBFABRIC).
func SRDReason(t *scenarios.Test, tool string) string {
	spec, ok := Lookup(tool)
	if !ok || spec.overSRD == nil || !NeedsRDMA(t, tool) {
		return ""
	}
	return spec.overSRD(t)
}

// Image says which image provides a tool in a pod: the tools image this
// project builds from Debian packages (images/tools), or the GPU image the
// user already serves with (NIXL and nixlbench, nccl-tests), which this
// project never builds.
type Image string

// Images.
const (
	ImageTools Image = "tools"
	ImageGPU   Image = "gpu"
)

// table is every tool, in the order docs and errors list them. Each entry
// is defined in the tool's own file.
var table = []Spec{
	perftestSpec(scenarios.ToolIBWriteBW, parsers.MetricBandwidth),
	perftestSpec(scenarios.ToolIBReadBW, parsers.MetricBandwidth),
	perftestSpec(scenarios.ToolIBSendBW, parsers.MetricBandwidth),
	perftestSpec(scenarios.ToolIBWriteLat, parsers.MetricLatency),
	perftestSpec(scenarios.ToolIBReadLat, parsers.MetricLatency),
	perftestSpec(scenarios.ToolIBSendLat, parsers.MetricLatency),
	rpingSpec,
	nixlbenchSpec,
	ncclSpec,
	ucxPerftestSpec,
	iperf3Spec,
}

// Lookup returns the spec of a tool by its scenario name.
func Lookup(tool string) (Spec, bool) {
	for i := range table {
		if table[i].Name == tool {
			return table[i], true
		}
	}
	return Spec{}, false
}

// Names lists every tool Lookup knows, in the table's order (docs, errors).
func Names() []string {
	out := make([]string, len(table))
	for i := range table {
		out[i] = table[i].Name
	}
	return out
}

const installMPI = "install an MPI launcher (Debian/Ubuntu: apt-get install openmpi-bin) on the first rank's endpoint"

// InstallHint says how to get a missing binary, by binary name (ib_read_lat,
// sendrecv_perf, mpirun …); "" for a binary rdmabench does not know.
func InstallHint(binary string) string {
	switch {
	case binary == "mpirun":
		return installMPI
	case strings.HasSuffix(binary, "_perf"):
		return ncclSpec.Install
	}
	for i := range table {
		if slices.Contains(table[i].Binaries, binary) {
			return table[i].Install
		}
	}
	return ""
}

// ParserOf is the name the parsers package is given for a test's output:
// the tool, or for nccl the binary of its collective (sendrecv_perf).
func ParserOf(t *scenarios.Test) string {
	spec, ok := Lookup(t.Tool)
	if !ok {
		return t.Tool
	}
	if spec.Family == parsers.FamilyNCCL {
		return NCCLBinary(t.Args.Collective)
	}
	return spec.Parser
}

// MetricOf is a test's headline metric: its tool's, refined by the test's
// arguments (ucx_perftest *_lat tests measure latency).
func MetricOf(t *scenarios.Test) parsers.Metric {
	spec, _ := Lookup(t.Tool)
	if spec.metricOf != nil {
		return spec.metricOf(t)
	}
	return spec.Metric
}

// Describe is what every result of a test carries to say what it is: its
// tool's family and its headline metric. A tool the table does not know
// (a report of another version) has neither.
func Describe(t *scenarios.Test, tool string) (parsers.Family, parsers.Metric) {
	spec, ok := Lookup(tool)
	if !ok {
		return "", ""
	}
	if t == nil {
		return spec.Family, spec.Metric
	}
	return spec.Family, MetricOf(t)
}

// NeedsRDMA says whether a job of tool for test t (nil when the scenario is
// not known) needs an RDMA device on its endpoints: what the test's requires
// says, else what the tool needs. ucx_perftest and nixlbench over TCP
// (transports "tcp") need none either, nor do they when no test says.
func NeedsRDMA(t *scenarios.Test, tool string) bool {
	if t != nil {
		switch t.Requires {
		case scenarios.RequiresRDMA:
			return true
		case scenarios.RequiresTCP:
			return false
		}
	}
	spec, ok := Lookup(tool)
	if !ok || !spec.NeedsRDMA {
		return false
	}
	if spec.SelectsTransport {
		return t != nil && !tcpOnly(t.Args.Transports)
	}
	return true
}

// Transport is the transport a result of tool can only have used, for
// when its output names none (iperf3 is TCP, rping RDMA by construction);
// nil when the tool leaves a choice.
func Transport(tool string) *parsers.Transport {
	spec, _ := Lookup(tool)
	if spec.Transport == nil {
		return nil
	}
	tr := *spec.Transport
	tr.Evidence = slices.Clone(tr.Evidence)
	return &tr
}

// PinnedKiB is the memory a test of tool registers, roughly, for
// preflight's memlock check; ok false when the table has no estimate.
func PinnedKiB(t *scenarios.Test, tool string) (kib int64, ok bool) {
	spec, found := Lookup(tool)
	if t == nil || !found || spec.pinnedKiB == nil {
		return 0, false
	}
	return spec.pinnedKiB(t), true
}

// messagePinnedKiB: perftest and ucx_perftest register two buffers of the
// largest message per queue pair (-a: 8 MiB) plus their queues.
func messagePinnedKiB(t *scenarios.Test) int64 {
	size := int64(64 << 10)
	if t.Args.Sweep {
		size = 8 << 20
	}
	for _, s := range t.Args.Sizes {
		size = max(size, s.Bytes)
	}
	return (2*size*int64(max(t.Args.QPs, 1)) + 4<<20) >> 10
}

// WireMessages is how many messages of s.Bytes a sample of tool put on the
// wire, warm-up included, for the path proof: the tool's own account where
// its output gives one, else the sample's iterations, else testIters (the
// test's); 0 when nothing says.
func WireMessages(tool string, m *parsers.Measurement, s *parsers.Sample, testIters int64) int64 {
	spec, _ := Lookup(tool)
	if spec.messages != nil {
		if n := spec.messages(m, s); n > 0 {
			return n
		}
	}
	if s.Iterations > 0 {
		return s.Iterations
	}
	return testIters
}

// UCXSegSize is the segment UCX's rc transports copy remote memory in when
// their protocol is copy-in/copy-out (UCX_RC_VERBS_SEG_SIZE, UCX_RC_MLX5_SEG_SIZE:
// 8 KiB + 64 by default); env may set it.
func UCXSegSize(env map[string]string) int64 {
	for _, k := range []string{"UCX_RC_VERBS_SEG_SIZE", "UCX_RC_MLX5_SEG_SIZE", "UCX_IB_SEG_SIZE"} {
		if v, err := strconv.ParseInt(strings.TrimSpace(env[k]), 10, 64); err == nil && v > 0 {
			return v
		}
	}
	return 8256
}

// NeedsGPU says whether a job of tool for test t (nil when the scenario is
// not known) cannot run without a GPU: nccl-tests always, nixlbench when
// either side's segment is VRAM.
func NeedsGPU(t *scenarios.Test, tool string) bool {
	spec, _ := Lookup(tool)
	switch spec.Family {
	case parsers.FamilyNCCL:
		return true
	case parsers.FamilyNixlbench:
		return t != nil && (strings.EqualFold(t.Args.InitiatorSeg, "VRAM") || strings.EqualFold(t.Args.TargetSeg, "VRAM"))
	}
	return false
}
