// Package tools is the runner's part of every benchmark tool: how to build
// a leg's command lines from a test's arguments, how to tell each side is
// ready, which side's output holds the result, how long a leg may take,
// what its build must pass (preflight), and what it puts on the wire (the
// path proof). What every other package reads of a tool (its name, family,
// programs, metric, arguments, needs, image) is its description in package
// tool; this package joins the two by name (runners, table).
//
// Adding a tool means its description in tool/, one file here with its
// runner's part and a line in runners, one parser (package parsers) and,
// where the real tool cannot run in CI, one stand-in;
// docs/development/adding-a-tool.md walks through it, and
// TestEveryToolHasARunner and TestDescriptionsAgree fail until the pieces
// agree. Nothing is registered at init time.
package tools

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Spec is a tool's description (package tool: its name, family, metric,
// arguments, needs, port, image, install hint) with what only the runner
// can know: how to build its command lines for a leg, how long a leg may
// take, what its build must pass, and how to read its wire traffic.
type Spec struct {
	tool.Spec
	// Transport is the transport the tool can only use, when it has one
	// (iperf3: TCP, rping: RDMA CM): a result whose output names none
	// carries it.
	Transport *parsers.Transport

	// build appends the commands of one leg to dst, servers (or the first
	// rank) first, each with its readiness signal (Ready*).
	build func(dst []Command, spec *Spec, leg *Leg) ([]Command, error)
	// work is how long the tool itself may take for a leg of size bytes
	// (0: the test's own sizes); LegTimeout adds the start-up margin.
	work func(spec *Spec, t *scenarios.Test, size int64) time.Duration
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
	// perRail: a pair test that measures one rail per leg, so that a
	// multi-rail pod's rails are measured rail i to rail i (perftest);
	// the others are given every rail at once (NCCL_IB_HCA …).
	perRail   bool
	pinnedKiB func(t *scenarios.Test) int64
	// program is the binary a test runs, where its arguments choose it
	// (nccl-tests: the collective's; t nil: the scenario is not known);
	// nil: the description's first program.
	program func(t *scenarios.Test) string
	// etcd says whether a test of the tool rendezvous through the run's
	// etcd (NeedsEtcd); nil: it does not.
	etcd func(t *scenarios.Test) bool
	// overSRD says whether a test of the tool can run over SRD, the only
	// reliable transport of AWS EFA ("" yes, else why not); nil: it can.
	overSRD func(t *scenarios.Test) string
}

// MayUseEtcd says whether a test of the tool can rendezvous through the
// run's etcd (NeedsEtcd decides per test).
func (s *Spec) MayUseEtcd() bool { return s.etcd != nil }

// installOf is how to get a tool's binary (its description's Install).
func installOf(name string) string {
	spec, _ := tool.Lookup(name)
	return spec.Install
}

// SRDReason is why a test cannot run over AWS EFA, whose reliable
// transport is SRD (Scalable Reliable Datagram), not RC: "" when it can
// (a test that needs no RDMA, perftest with connection SRD or UD, NCCL
// through aws-ofi-nccl, nixlbench over LIBFABRIC).
func SRDReason(t *scenarios.Test, name string) string {
	spec, ok := Lookup(name)
	if !ok || spec.overSRD == nil || !NeedsRDMA(t, name) {
		return ""
	}
	return spec.overSRD(t)
}

// runners are the runner's part of each tool, by name; table joins them
// to package tool's descriptions (TestEveryToolHasARunner).
var runners = map[string]Spec{
	scenarios.ToolIBWriteBW: perftestSpec, scenarios.ToolIBReadBW: perftestSpec, scenarios.ToolIBSendBW: perftestSpec,
	scenarios.ToolIBWriteLat: perftestSpec, scenarios.ToolIBReadLat: perftestSpec, scenarios.ToolIBSendLat: perftestSpec,
	scenarios.ToolRping: rpingSpec, scenarios.ToolNixlbench: nixlbenchSpec, scenarios.ToolNCCL: ncclSpec, tool.NCCLProbe: ncclProbeSpec, tool.GPUCopy: gpuCopySpec, tool.NixlProbe: nixlProbeSpec,
	tool.DeepEPProbe:          deepEPProbeSpec,
	scenarios.ToolUCXPerftest: ucxPerftestSpec, scenarios.ToolIperf3: iperf3Spec,
}

// table is every tool, in package tool's order.
var table = joinTable()

func joinTable() []Spec {
	descs := tool.All()
	out := make([]Spec, 0, len(descs))
	for _, d := range descs {
		r, ok := runners[d.Name]
		if !ok {
			continue // TestEveryToolHasARunner names it
		}
		r.Spec = d
		out = append(out, r)
	}
	return out
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
		return installOf(tool.NCCL)
	}
	for i := range table {
		if slices.Contains(table[i].Programs, binary) {
			return table[i].Install
		}
	}
	return ""
}

// ParserOf is the program a test runs, which is also the name the parsers
// package is given for its output: the tool's, or for nccl the binary of
// its collective (sendrecv_perf). It must be on every endpoint of the test.
func ParserOf(t *scenarios.Test) string {
	return BinaryOf(t, t.Tool)
}

// MetricOf is a test's headline metric: its tool's, refined by the test's
// arguments (ucx_perftest *_lat tests measure latency).
func MetricOf(t *scenarios.Test) parsers.Metric { return tool.MetricOf(t.Tool, t.Settings()) }

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
func NeedsRDMA(t *scenarios.Test, name string) bool {
	if t != nil {
		switch t.Requires {
		case scenarios.RequiresRDMA:
			return true
		case scenarios.RequiresTCP:
			return false
		}
	}
	spec, ok := Lookup(name)
	if !ok || !spec.NeedsRDMA {
		return false
	}
	if spec.SelectsTransport {
		return t != nil && !tool.TransportsAreTCP(t.Args.Transports)
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
// not known) cannot run without a GPU: the tool table's decision
// (tool.NeedsGPU) on the test's arguments.
func NeedsGPU(t *scenarios.Test, name string) bool {
	var a tool.Settings
	if t != nil {
		a = t.Settings()
	}
	return tool.NeedsGPU(name, a)
}
