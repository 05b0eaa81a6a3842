package tool

import "strings"

// Settings is what a tool's decisions read of a test: the arguments that
// change what the tool needs or measures. scenarios.Test.Settings fills it.
type Settings struct {
	// Transports is UCX_TLS (ucx_perftest, nixlbench over UCX).
	Transports string
	// InitiatorSeg and TargetSeg are nixlbench's segments (DRAM, VRAM).
	InitiatorSeg, TargetSeg string
	// UseCUDA is perftest --use_cuda (GPUDirect) given.
	UseCUDA bool
	// UCXTest is ucx_perftest -t (tag_bw, tag_lat …).
	UCXTest string
}

// NeedsGPU says whether a test of tool cannot run without a GPU on its
// endpoints: nccl-tests always, nixlbench with a VRAM segment, perftest
// with useCuda. The one place this is decided.
func NeedsGPU(name string, a Settings) bool {
	spec, ok := Lookup(name)
	return ok && spec.gpu != nil && spec.gpu(a)
}

// LatencyTest says whether a test of tool measures latency rather than
// bandwidth (perftest *_lat tools, ucx_perftest *_lat tests).
func LatencyTest(name string, a Settings) bool {
	return MetricOf(name, a) == MetricLatency
}

// MetricOf is a test's headline metric: its tool's, refined by the test's
// arguments (ucx_perftest *_lat tests measure latency); "" for a tool the
// table does not know.
func MetricOf(name string, a Settings) Metric {
	spec, ok := Lookup(name)
	switch {
	case !ok:
		return ""
	case spec.latency != nil && spec.latency(a):
		return MetricLatency
	}
	return spec.Metric
}

// localTransports are UCX transports that stay on the host (loopback,
// shared memory, CUDA copies): they need no network device at all.
var localTransports = []string{"self", "sm", "shm", "posix", "sysv", "cma", "knem", "xpmem", "cuda_copy", "rocm_copy"}

// IsLocalTransport says whether a UCX transport name stays on the host.
func IsLocalTransport(name string) bool {
	for _, t := range localTransports {
		if strings.EqualFold(name, t) {
			return true
		}
	}
	return false
}

// TransportsAreTCP says whether a UCX_TLS list selects TCP (and local
// transports) only, so that no RDMA device is involved: "tcp", "tcp,self",
// or the exclusion of every IB transport ("^ib"). The one place this is
// decided.
func TransportsAreTCP(tls string) bool {
	if strings.TrimSpace(tls) == "" {
		return false
	}
	for _, t := range strings.Split(tls, ",") {
		t = strings.ToLower(strings.TrimSpace(t))
		switch {
		case t == "tcp", IsLocalTransport(t):
		case t == "^ib": // every IB transport excluded (one of rc, ud, dc alone leaves the others)
		default:
			return false
		}
	}
	return true
}

// DisplayUnit is how a metric's bandwidth is shown: its divisor from bits
// per second and its unit. Bus bandwidth (collectives) in bytes per second
// (GB/s), as nccl-tests prints it and people who tune NCCL read it; NIC
// tools in bits per second (Gb/s), beside the line rate.
func DisplayUnit(m Metric) (divisor float64, unit string) {
	if m == MetricBusBW {
		return 8e9, "GB/s"
	}
	return 1e9, "Gb/s"
}

// UsesNCCL says whether a tool measures NCCL (nccl-tests, the NCCL probe):
// on EKS its ranks need NCCL's EFA plugin.
func UsesNCCL(name string) bool {
	spec, ok := Lookup(name)
	return ok && spec.Family == FamilyNCCL
}

// FamilyMetric is the headline metric of a family's first tool (what a
// result of a program the table does not name, all_reduce_perf, measures
// at all); "" for an unknown family.
func FamilyMetric(f Family) Metric {
	for i := range table {
		if table[i].Family == f {
			return table[i].Metric
		}
	}
	return ""
}

// ExpectKeys are the expect keys a test of tool may write: its Expect,
// narrowed by what the test measures where its arguments decide that
// (ucx_perftest: a *_lat test is judged by latency, else by bandwidth).
func ExpectKeys(name string, a Settings) []string {
	spec, ok := Lookup(name)
	switch {
	case !ok:
		return nil
	case spec.latency == nil:
		return spec.Expect
	case spec.latency(a):
		return latExpect
	}
	return bwExpect
}

// Subject is how an error names a test of tool: the tool, and what its
// arguments chose where they decide what it measures (a ucx_perftest
// latency test reads other expect keys than a bandwidth test).
func Subject(name string, a Settings) string {
	if spec, ok := Lookup(name); ok && spec.subject != nil {
		return spec.subject(a)
	}
	return name
}

// ProgramMetric is what a program's results measure at all: its tool's
// metric, else (a program read, never run: ib_atomic_lat, alltoallv_perf)
// latency for perftest's *_lat binaries, else its family's; "" when none
// is known.
func ProgramMetric(program string, f Family) Metric {
	if m := MetricOf(program, Settings{}); m != "" {
		return m
	}
	if f == FamilyPerftest && IsPerftestLatency(program) {
		return MetricLatency
	}
	return FamilyMetric(f)
}

// IsKVFallback says whether a program's best bandwidth stands for the KV
// transfer where no KV-transfer tool measured it (KVFallback).
func IsKVFallback(program string) bool {
	spec, ok := Lookup(program)
	return ok && spec.KVFallback
}

// ProgramOp is the one-sided operation a program performs by its name
// (ib_read_bw: READ), "" when its arguments decide or it has none.
func ProgramOp(program string) string {
	if spec, ok := Lookup(program); ok {
		return spec.Op
	}
	return ""
}

// ImageRequired says whether an image family (cluster.images key) must be
// named: its tools come from outside the tools image (the serving image,
// rdmabench's bundle), which cannot stand in for it.
func ImageRequired(family string) bool {
	required := false
	for i := range table {
		if table[i].ImageFamily == family {
			if table[i].Source == SourceTools {
				return false
			}
			required = true
		}
	}
	return required
}
