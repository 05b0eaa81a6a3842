package tool

import "strings"

// The perftest tools rdmabench runs (Debian's perftest package).
const (
	IBWriteBW  = "ib_write_bw"
	IBReadBW   = "ib_read_bw"
	IBSendBW   = "ib_send_bw"
	IBWriteLat = "ib_write_lat"
	IBReadLat  = "ib_read_lat"
	IBSendLat  = "ib_send_lat"
)

// extraPerftest are perftest programs whose output the parser reads though
// no test runs them.
var extraPerftest = []string{"ib_atomic_bw", "ib_atomic_lat"}

const installPerftest = "install perftest (Debian/Ubuntu: apt-get install perftest; RHEL: dnf install perftest)"

var (
	perftestBWArgs  = []string{"sizes", "sweep", "qps", "iterations", "duration", "bidirectional", "connection", "mtu", "rdmaCM", "useCuda", "extra"}
	perftestLatArgs = []string{"sizes", "sweep", "iterations", "duration", "connection", "mtu", "rdmaCM", "useCuda", "extra"}
	bwExpect        = []string{"minLineRate", "minBandwidth", "transport", "lowPair"}
	latExpect       = []string{"maxLatency", "maxP99Latency", "transport"}
)

// perftest is one perftest binary (ib_write_bw, ib_read_lat …): they share
// a command line, a rendezvous (a TCP port, -p) and an output layout. The
// tools image has Debian's build (no CUDA); cluster.images.perftest may
// name one built with CUDA.
func perftest(name string, m Metric) Spec {
	args, expect := perftestBWArgs, bwExpect
	if m == MetricLatency {
		args, expect = perftestLatArgs, latExpect
	}
	return Spec{Name: name, Family: FamilyPerftest, Programs: []string{name}, Metric: m,
		Args: args, Expect: expect, NeedsRDMA: true, DefaultPort: 18515, GPUMemoryOverRDMA: true,
		Source: SourceTools, ImageFamily: "perftest", Install: installPerftest,
		gpu: func(a Settings) bool { return a.UseCUDA }}
}

// IsPerftestLatency says whether a perftest program measures latency: the
// family's *_lat binaries (a result of another version carries no metric).
func IsPerftestLatency(program string) bool { return strings.HasSuffix(program, "_lat") }
