package tool

import (
	"fmt"
	"slices"
	"strings"
)

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

// Connections are perftest -c connection types.
var Connections = []string{"RC", "UC", "UD", "XRC", "DC", "SRD"}

// MTUs are the IB MTUs perftest -m accepts.
var MTUs = []int{256, 512, 1024, 2048, 4096}

var (
	perftestBWArgs = []Arg{perftestSizes, perftestSweep, perftestQPs, argIterations, perftestDuration, argBidirectional,
		perftestConnection, perftestMTU, perftestRDMACM, perftestUseCUDA, argExtra}
	perftestLatArgs = []Arg{perftestSizes, perftestSweep, argIterations, perftestDuration,
		perftestConnection, perftestMTU, perftestRDMACM, perftestUseCUDA, argExtra}
	bwExpect  = []string{"minLineRate", "minBandwidth", "transport", "lowPair", "affinity"}
	latExpect = []string{"maxLatency", "maxP99Latency", "transport", "affinity"}
)

// perftest's arguments: each exits at once on a value outside its range,
// so the loader refuses it first.
var (
	perftestSizes = Arg{Key: "sizes", Kind: KindSizes, Check: func(x Value) (string, string) {
		if x.Bytes > 1<<31-1 {
			return fmt.Sprintf("size %s is too large for perftest", x.Text), "perftest -s accepts at most 2147483647 bytes (2GiB - 1)"
		}
		return "", ""
	}}
	perftestSweep = Arg{Key: "sweep", Kind: KindBool, Conflict: func(v Values) (string, string) {
		if v.Bool("sweep") && v.Has("sizes") {
			return "sweep and sizes exclude each other", "sweep runs every size from 2 B to 8 MiB; keep either sweep or sizes"
		}
		return "", ""
	}}
	perftestQPs = Arg{Key: "qps", Kind: KindInt, Min: 1, Hint: "perftest -q: queue pairs per process, 1–16384", Check: func(x Value) (string, string) {
		if x.Int > 16384 {
			return fmt.Sprintf("%d queue pairs is too many", x.Int), "perftest -q accepts at most 16384"
		}
		return "", ""
	}}
	// -a runs by iterations only: "Duration mode currently doesn't support running on all sizes".
	perftestDuration = Arg{Key: "duration", Kind: KindDuration, Conflict: func(v Values) (string, string) {
		if v.Bool("sweep") && v.Has("sweep") {
			return "sweep and duration exclude each other",
				`perftest runs -a only by iterations ("Duration mode currently doesn't support running on all sizes"); keep either sweep or duration`
		}
		return "", ""
	}}
	perftestConnection = Arg{Key: "connection", Kind: KindString, OneOf: Connections, What: "connection types"}
	perftestMTU        = Arg{Key: "mtu", Kind: KindInt, Check: func(x Value) (string, string) {
		if !slices.Contains(MTUs, x.Int) {
			return fmt.Sprintf("%d is not an IB MTU", x.Int), "perftest -m accepts 256, 512, 1024, 2048 or 4096"
		}
		return "", ""
	}}
	perftestRDMACM  = Arg{Key: "rdmaCM", Kind: KindBool}
	perftestUseCUDA = Arg{Key: "useCuda", Kind: KindInt, Check: func(x Value) (string, string) {
		if x.Int < 0 {
			return fmt.Sprintf("GPU index %d is negative", x.Int), "the GPU index for --use_cuda, 0 or more"
		}
		return "", ""
	}}
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
	s := Spec{Name: name, Family: FamilyPerftest, Programs: []string{name}, Metric: m,
		Args: args, Expect: expect, NeedsRDMA: true, DefaultPort: 18515, GPUMemoryOverRDMA: true,
		Source: SourceTools, ImageFamily: "perftest", Install: installPerftest,
		gpu: func(a Settings) bool { return a.UseCUDA }}
	switch name {
	case IBWriteBW:
		s.KVFallback, s.waterfall = true, writeBWLayer
	case IBReadBW, IBReadLat:
		s.Op = "READ"
	}
	return s
}

// IsPerftestLatency says whether a perftest program measures latency: the
// family's *_lat binaries (a result of another version carries no metric).
func IsPerftestLatency(program string) bool { return strings.HasSuffix(program, "_lat") }
