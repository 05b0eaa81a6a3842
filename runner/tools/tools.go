// Package tools describes every benchmark tool rdmabench drives, once: which
// binaries it needs, whether it needs an RDMA device, how to build its
// command lines from a test's arguments, how to tell its server is ready,
// which side's output holds the result, which parser reads it, what its
// headline metric is, how to install it and how long a run may take.
//
// The table is explicit code (Lookup is a switch): adding a tool means adding
// one case here and one builder file, nothing is registered at init time.
package tools

import (
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/scenarios"
)

// Family groups tools that share a command-line shape and rendezvous.
type Family string

// Families of tools.
const (
	FamilyPerftest  Family = "perftest"     // ib_*_bw / ib_*_lat: server + client, TCP out-of-band
	FamilyRping     Family = "rping"        // server + client, RDMA-CM port
	FamilyNixlbench Family = "nixlbench"    // initiator + target, etcd rendezvous
	FamilyNCCL      Family = "nccl-tests"   // one launcher over every rank
	FamilyUCX       Family = "ucx_perftest" // server + client, TCP rendezvous
	FamilyIperf3    Family = "iperf3"       // server + client, TCP
)

// Metric is what a tool's headline number is, so the runner knows how to
// hold it against the line rate (only bandwidths are).
type Metric string

// Headline metrics.
const (
	MetricBandwidth Metric = "bandwidth" // bits/s, compared with the line rate
	MetricBusBW     Metric = "busbw"     // nccl-tests bus bandwidth, bits/s, compared with the line rate
	MetricLatency   Metric = "latency"   // microseconds
	MetricPings     Metric = "pings"     // completed round trips
)

// Spec is everything the planner and the runner need to know about a tool.
type Spec struct {
	// Name is the tool as scenarios write it (ib_write_bw, nccl, …).
	Name   string
	Family Family
	// Binaries must exist on every endpoint that runs the tool. For nccl
	// the collective picks the binary; Binaries lists the default.
	Binaries []string
	// NeedsRDMA is true when the tool cannot run without an RDMA device
	// (a test may still say requires: tcp, e.g. nixlbench over UCX_TLS=tcp).
	NeedsRDMA bool
	// Parser is the tool name handed to the parsers package.
	Parser string
	// Metric is the headline figure, for line-rate efficiency.
	Metric Metric
	// DefaultPort is the tool's own default rendezvous port; the planner
	// counts up from it for concurrent jobs. 0 when the tool has none.
	DefaultPort int
	// Install says how to get the binary when it is missing.
	Install string
	// Directional tools run only from→to (nixlbench: the from side is
	// the initiator); the planner adds no reverse legs across pools.
	Directional bool
}

const (
	installPerftest = "install perftest (Debian/Ubuntu: apt-get install perftest; RHEL: dnf install perftest)"
	installRping    = "install rdma-core's examples (Debian/Ubuntu: apt-get install rdmacm-utils; RHEL: dnf install librdmacm-utils)"
	installUCX      = "install UCX's tools (Debian/Ubuntu: apt-get install ucx-utils; RHEL: dnf install ucx)"
	installIperf3   = "install iperf3 (Debian/Ubuntu: apt-get install iperf3; RHEL: dnf install iperf3)"
	installNixl     = "use an image with nixlbench (the project's images/ builds one from ai-dynamo/nixl benchmark/nixlbench)"
	installNCCL     = "use an image with nccl-tests (the project's images/ builds one; make MPI=1 for several endpoints) and put its build/ on PATH"
	installMPI      = "install an MPI launcher (Debian/Ubuntu: apt-get install openmpi-bin) on the first rank's endpoint"
)

// InstallHint says how to get a missing binary, by binary name (ib_read_lat,
// sendrecv_perf, mpirun …); "" for a binary rdmabench does not know.
func InstallHint(binary string) string {
	switch {
	case binary == "mpirun":
		return installMPI
	case strings.HasSuffix(binary, "_perf"):
		return installNCCL
	}
	for _, name := range Names() {
		if spec, _ := Lookup(name); slices.Contains(spec.Binaries, binary) {
			return spec.Install
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
	if spec.Family == FamilyNCCL {
		return NCCLBinary(t.Args.Collective)
	}
	return spec.Parser
}

// Lookup returns the spec of a tool by its scenario name.
func Lookup(tool string) (Spec, bool) {
	switch tool {
	case scenarios.ToolIBWriteBW, scenarios.ToolIBReadBW, scenarios.ToolIBSendBW:
		return perftestSpec(tool, MetricBandwidth), true
	case scenarios.ToolIBWriteLat, scenarios.ToolIBReadLat, scenarios.ToolIBSendLat:
		return perftestSpec(tool, MetricLatency), true
	case scenarios.ToolRping:
		return Spec{Name: tool, Family: FamilyRping, Binaries: []string{"rping"}, NeedsRDMA: true,
			Parser: "rping", Metric: MetricPings, DefaultPort: 7174, Install: installRping}, true
	case scenarios.ToolNixlbench:
		return Spec{Name: tool, Family: FamilyNixlbench, Binaries: []string{"nixlbench"}, NeedsRDMA: true,
			Parser: "nixlbench", Metric: MetricBandwidth, Install: installNixl, Directional: true}, true
	case scenarios.ToolNCCL:
		return Spec{Name: tool, Family: FamilyNCCL, Binaries: []string{"all_reduce_perf"},
			Parser: "nccl-tests", Metric: MetricBusBW, DefaultPort: DefaultNCCLPort, Install: installNCCL}, true
	case scenarios.ToolUCXPerftest:
		return Spec{Name: tool, Family: FamilyUCX, Binaries: []string{"ucx_perftest"}, NeedsRDMA: true,
			Parser: "ucx_perftest", Metric: MetricBandwidth, DefaultPort: 13337, Install: installUCX}, true
	case scenarios.ToolIperf3:
		return Spec{Name: tool, Family: FamilyIperf3, Binaries: []string{"iperf3"},
			Parser: "iperf3", Metric: MetricBandwidth, DefaultPort: 5201, Install: installIperf3}, true
	}
	return Spec{}, false
}

func perftestSpec(tool string, m Metric) Spec {
	return Spec{Name: tool, Family: FamilyPerftest, Binaries: []string{tool}, NeedsRDMA: true,
		Parser: tool, Metric: m, DefaultPort: 18515, Install: installPerftest}
}

// Names lists every tool Lookup knows, in a fixed order (docs, errors).
func Names() []string {
	return []string{
		scenarios.ToolIBWriteBW, scenarios.ToolIBReadBW, scenarios.ToolIBSendBW,
		scenarios.ToolIBWriteLat, scenarios.ToolIBReadLat, scenarios.ToolIBSendLat,
		scenarios.ToolRping, scenarios.ToolNixlbench, scenarios.ToolNCCL,
		scenarios.ToolUCXPerftest, scenarios.ToolIperf3,
	}
}

// NeedsRDMA says whether test t needs an RDMA device on its endpoints:
// what the test's requires says, else what the tool needs. ucx_perftest
// and nixlbench over TCP (transports "tcp") need none either.
func NeedsRDMA(t *scenarios.Test) bool {
	switch t.Requires {
	case "rdma":
		return true
	case "tcp":
		return false
	}
	spec, ok := Lookup(t.Tool)
	if !ok || !spec.NeedsRDMA {
		return false
	}
	if spec.Family == FamilyUCX || spec.Family == FamilyNixlbench {
		return !tcpOnly(t.Args.Transports)
	}
	return true
}
