package tool

import "slices"

// Family is the group of tools that share a command-line shape, a
// rendezvous and a parser; every result in report.json carries it.
type Family string

// Tool families.
const (
	FamilyPerftest    Family = "perftest"
	FamilyRping       Family = "rping"
	FamilyUCXPerftest Family = "ucx_perftest"
	FamilyIperf3      Family = "iperf3"
	FamilyNixlbench   Family = "nixlbench"
	FamilyNCCL        Family = "nccl-tests"
	// FamilyDeepEP is in deepepprobe.go, beside its tool.
)

// Metric names the figure a result is judged and compared by: its headline.
// The value is the sample field's JSON name, as report.json carries it in
// each result's "metric" and in its stats. Renderers read it, never guess it.
type Metric string

// Headline metrics.
const (
	MetricBandwidth Metric = "bw_avg_bps" // bits/s, held against the line rate
	MetricBusBW     Metric = "busbw_bps"  // nccl-tests bus bandwidth, bits/s, held against the line rate
	MetricLatency   Metric = "lat_avg_us" // microseconds
	MetricPings     Metric = "pings"      // completed round trips (rping): no per-size figure
)

// IsBandwidth says whether the metric is a rate, held against the line rate
// (and higher is better); latency is lower-is-better.
func (m Metric) IsBandwidth() bool { return m == MetricBandwidth || m == MetricBusBW }

// Source says where a tool's binary comes from in a pod.
type Source string

// Sources.
const (
	// SourceTools: Debian's packages, in the tools image this project
	// builds (images/tools).
	SourceTools Source = "tools"
	// SourceServing: the serving image the user already runs (NIXL and
	// nixlbench, nccl-tests), which this project never builds.
	SourceServing Source = "serving"
	// SourceBundle: rdmabench's own programs, which it brings into the pod
	// beside itself (the NCCL probe); they drive the serving image's
	// libraries.
	SourceBundle Source = "bundle"
)

// Spec is what every package needs to know about a tool that does not
// depend on a scenario's types or on endpoints.
type Spec struct {
	// Name is the tool as scenarios write it (ib_write_bw, nccl, …).
	Name string
	// Family is the tool's parser family.
	Family Family
	// Programs are the binary names whose output the family's parser reads
	// for this tool (nccl: every collective's <collective>_perf); the first
	// is the one run by default.
	Programs []string
	// Metric is the headline figure; a test's arguments may refine it
	// (LatencyTest).
	Metric Metric
	// Args is the argument schema: the keys of args a test of the tool may
	// write, each with its kind, default, allowed values and checks
	// (args.go). The loader applies and checks them from here.
	Args []Arg
	// ArgRules are the tool's rules across its keys (perRequest excludes
	// sizes …), checked after each key's own.
	ArgRules []Rule
	// Expect are the keys of expect a test of the tool may write.
	Expect []string
	// NeedsRDMA is true when the tool cannot run without an RDMA device
	// (a test may still say requires: tcp where SelectsTransport).
	NeedsRDMA bool
	// SelectsTransport is true when a test chooses the tool's transport
	// (args.transports: UCX_TLS), so that TCP needs no RDMA device.
	SelectsTransport bool
	// DefaultPort is the tool's own rendezvous port; the planner counts up
	// from it for concurrent jobs.
	DefaultPort int
	// Directional tools run only from→to (nixlbench: the from side is the
	// initiator); the planner adds no reverse legs across pools.
	Directional bool
	// Source is where its binary comes from; ImageFamily the key of
	// cluster.images that names its image ("" the tools image).
	Source      Source
	ImageFamily string
	// Install says how to get the binary when it is missing.
	Install string
	// HostInstall is Install for a host (local, ssh backends) where
	// Install speaks of images; "" where Install fits both.
	HostInstall string

	// Collective tools run one job whose ranks are every endpoint of a
	// test's from and to (nccl-tests): no pattern pairs them, and a test
	// on one host needs no RDMA device (NVLink, PCIe, shared memory).
	Collective bool
	// MPI: ranks on several endpoints are started by an MPI launcher on
	// the first (nccl-tests), which must be there.
	MPI bool
	// KVTransfer tools move a request's KV cache as disaggregated serving
	// does (nixlbench): their results feed the KV-transfer budget and the
	// backend comparison.
	KVTransfer bool
	// GPUMemoryOverRDMA: when a test of the tool needs a GPU, the tool
	// itself moves GPU memory over RDMA (GPUDirect: perftest --use_cuda,
	// nixlbench's VRAM segments); NCCL decides that on its own.
	GPUMemoryOverRDMA bool

	// BackendArg is the args key that names what a leg runs over, as
	// reports show it (nixlbench: its NIXL backend; ucx_perftest: UCX_TLS);
	// args.backends variants override it. "": none.
	BackendArg string
	// KVFallback: where no KV-transfer tool measured, the tool's best
	// bandwidth stands for the KV transfer (ib_write_bw: one-sided writes).
	KVFallback bool
	// Op is the one-sided operation the tool performs, where its name
	// decides it (ib_read_*: READ: the reader pulls from its peer).
	Op string
	// EFABackend is the backend a test drives AWS EFA through on EKS
	// (args.backend) unless it wrote one; "": the tool has no such choice.
	EFABackend string

	// latency refines Metric by a test's arguments; nil keeps Metric.
	latency func(a Settings) bool
	// gpu says whether a test needs a GPU; nil: never.
	gpu func(a Settings) bool
	// waterfall says which layer of a pair's waterfall a result of the
	// tool measures (WaterfallLayer); nil: none.
	waterfall func(r LayerOf) (name string, level int, ok bool)
	// subject names a test of the tool in errors where its arguments
	// decide what it measures ("ucx_perftest tag_lat"); nil: the name.
	subject func(a Settings) string
}

// IsCollective says whether a family's tools are collectives (Collective).
func IsCollective(f Family) bool { return familyHas(f, func(s *Spec) bool { return s.Collective }) }

// IsKVTransfer says whether a family's tools move KV cache (KVTransfer).
func IsKVTransfer(f Family) bool { return familyHas(f, func(s *Spec) bool { return s.KVTransfer }) }

func familyHas(f Family, has func(*Spec) bool) bool {
	for i := range table {
		if table[i].Family == f && has(&table[i]) {
			return true
		}
	}
	return false
}

// RDMAOnly says whether the tool runs only over RDMA (perftest, rping): a
// test of it may not say requires: tcp.
func (s *Spec) RDMAOnly() bool { return s.NeedsRDMA && !s.SelectsTransport }

// table is every tool, in the order docs and errors list them; each entry
// is defined in the tool's own file.
var table = []Spec{
	perftest(IBWriteBW, MetricBandwidth), perftest(IBReadBW, MetricBandwidth), perftest(IBSendBW, MetricBandwidth),
	perftest(IBWriteLat, MetricLatency), perftest(IBReadLat, MetricLatency), perftest(IBSendLat, MetricLatency),
	rping, nixlbench, nixlProbe, nccl, ncclProbe, gpuCopy, deepEPProbe, ucxPerftest, iperf3,
}

// Lookup returns the description of a tool by its scenario name.
func Lookup(name string) (*Spec, bool) {
	for i := range table {
		if table[i].Name == name {
			return &table[i], true
		}
	}
	return nil, false
}

// Names lists every tool, in the table's order (docs, errors).
func Names() []string {
	out := make([]string, len(table))
	for i := range table {
		out[i] = table[i].Name
	}
	return out
}

// All returns every description, in the table's order.
func All() []Spec { return slices.Clone(table) }

// FamilyOf returns the family of a program (ib_write_bw, all_reduce_perf)
// or of a family's own name (for output whose exact binary is unknown).
func FamilyOf(program string) (Family, bool) {
	for i := range table {
		if string(table[i].Family) == program || slices.Contains(table[i].Programs, program) {
			return table[i].Family, true
		}
	}
	if slices.Contains(extraPerftest, program) {
		return FamilyPerftest, true
	}
	if slices.Contains(extraNCCL, program) {
		return FamilyNCCL, true
	}
	return "", false
}

// Programs lists every program name (and family name) FamilyOf knows,
// sorted: error messages and `rdmabench parse` show it.
func Programs() []string {
	var out []string
	for i := range table {
		out = append(out, string(table[i].Family))
		out = append(out, table[i].Programs...)
	}
	out = append(append(out, extraPerftest...), extraNCCL...)
	slices.Sort(out)
	return slices.Compact(out)
}
