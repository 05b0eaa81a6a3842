package scenarios

import "strings"

// What the scenario loader must know of each tool: the arguments and
// expectations that mean something to it, and whether it runs only over
// RDMA. Validation and the JSON schema both read these lists. The tool table
// itself is runner/tools (which imports this package, so these lists cannot
// be derived from it): TestEveryListMatchesTheToolTable there checks them.

// Tools lists the tool names a test may use.
var Tools = []string{
	ToolIBWriteBW, ToolIBReadBW, ToolIBSendBW,
	ToolIBWriteLat, ToolIBReadLat, ToolIBSendLat,
	ToolRping, ToolNixlbench, ToolNCCL, ToolUCXPerftest, ToolIperf3,
}

// Backends lists the endpoint backends.
var Backends = []string{BackendLocal, BackendSSH, BackendKube}

// Kubernetes value lists (cluster section): image pull policies, toleration
// operators and taint effects, as the API spells them.
var (
	PullPolicies        = []string{"Always", "IfNotPresent", "Never"}
	TolerationOperators = []string{"Equal", "Exists"}
	TaintEffects        = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	Platforms           = []string{PlatformAuto, PlatformKubernetes, PlatformOpenShift, PlatformGKE, PlatformEKS}
)

// Patterns lists the ways endpoints are paired.
var Patterns = []string{PatternPairwise, PatternAllToAll, PatternRing, PatternOneToMany, PatternManyToOne}

// Collectives are the nccl-tests operations (tool nccl, args.collective);
// each runs the binary <collective>_perf.
var Collectives = []string{"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast"}

// NixlBackends are the network backends nixlbench can drive (storage
// backends are not RDMA fabric tests).
var NixlBackends = []string{"UCX", "UCCL", "LIBFABRIC", "GPUNETIO", "Mooncake"}

// NixlRuntimes are nixlbench --runtime_type values: ETCD (through the
// run's etcd) and ASIO (two processes, a TCP socket between them).
var NixlRuntimes = []string{NixlRuntimeETCD, NixlRuntimeASIO}

// nixlbench runtimes.
const (
	NixlRuntimeETCD = "ETCD"
	NixlRuntimeASIO = "ASIO"
)

// NixlOps are nixlbench --op_type values; NixlSegments its segment types.
var (
	NixlOps      = []string{"READ", "WRITE"}
	NixlSegments = []string{"DRAM", "VRAM"}
)

// Connections are perftest -c connection types.
var Connections = []string{"RC", "UC", "UD", "XRC", "DC", "SRD"}

// MTUs are the IB MTUs perftest -m accepts.
var MTUs = []int{256, 512, 1024, 2048, 4096}

// NCCLDataTypes are nccl-tests -d values.
var NCCLDataTypes = []string{"int8", "uint8", "int32", "uint32", "int64", "uint64",
	"half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2", "all"}

// UCXTests are ucx_perftest -t tests (UCP and UCT).
var UCXTests = []string{"tag_lat", "tag_bw", "tag_sync_lat", "tag_sync_bw",
	"ucp_put_lat", "ucp_put_bw", "ucp_get", "ucp_add", "ucp_fadd", "ucp_swap", "ucp_cswap",
	"stream_bw", "stream_lat", "ucp_am_lat", "ucp_am_bw",
	"am_lat", "put_lat", "add_lat", "get", "fadd", "swap", "cswap", "am_bw", "put_bw", "get_bw", "add_mr"}

// Requirements a test may declare.
const (
	RequiresRDMA = "rdma"
	RequiresTCP  = "tcp"
)

// Requirements lists test.requires values.
var Requirements = []string{RequiresRDMA, RequiresTCP}

// toolSpec says what a tool reads from a test.
type toolSpec struct {
	args     []string // args keys it reads
	expect   []string // expect keys it can judge
	rdmaOnly bool     // runs only over RDMA: requires: tcp is refused
}

var (
	perftestBWArgs  = []string{"sizes", "sweep", "qps", "iterations", "duration", "bidirectional", "connection", "mtu", "rdmaCM", "useCuda", "extra"}
	perftestLatArgs = []string{"sizes", "sweep", "iterations", "duration", "connection", "mtu", "rdmaCM", "useCuda", "extra"}
	bwExpect        = []string{"minLineRate", "minBandwidth", "transport", "lowPair"}
	latExpect       = []string{"maxLatency", "maxP99Latency", "transport"}
)

var toolSpecs = map[string]toolSpec{
	ToolIBWriteBW:   {perftestBWArgs, bwExpect, true},
	ToolIBReadBW:    {perftestBWArgs, bwExpect, true},
	ToolIBSendBW:    {perftestBWArgs, bwExpect, true},
	ToolIBWriteLat:  {perftestLatArgs, latExpect, true},
	ToolIBReadLat:   {perftestLatArgs, latExpect, true},
	ToolIBSendLat:   {perftestLatArgs, latExpect, true},
	ToolRping:       {[]string{"sizes", "count", "extra"}, []string{"minPings"}, true},
	ToolNixlbench:   {[]string{"backend", "backends", "runtime", "perRequest", "op", "initiatorSeg", "targetSeg", "minSize", "maxSize", "maxBatch", "iterations", "transports", "extra"}, append(append([]string{}, bwExpect...), "maxLatency"), false},
	ToolNCCL:        {[]string{"collective", "minSize", "maxSize", "stepFactor", "iterations", "dataType", "extra"}, []string{"minLineRate", "minBandwidth", "minBusBW", "transport"}, false},
	ToolUCXPerftest: {[]string{"test", "sizes", "iterations", "transports", "extra"}, append(append([]string{}, bwExpect...), "maxLatency", "maxP99Latency"), false},
	ToolIperf3:      {[]string{"duration", "streams", "bidirectional", "extra"}, []string{"minLineRate", "minBandwidth", "lowPair"}, false},
}

// RDMAOnly says whether a tool runs only over RDMA (perftest, rping): a
// test of it may not say requires: tcp. Tools whose transport a test
// chooses (ucx_perftest, nixlbench), nccl (placement decides) and iperf3
// (TCP) are not.
func RDMAOnly(tool string) bool { return toolSpecs[tool].rdmaOnly }

// ncclAlias maps an nccl-tests binary name (all_reduce_perf) to its
// collective: `tool: alltoall_perf` is accepted as `tool: nccl` with
// `args.collective: alltoall`, because that is the name people know.
func ncclAlias(tool string) (string, bool) {
	c, ok := strings.CutSuffix(tool, "_perf")
	if !ok {
		return "", false
	}
	for _, k := range Collectives {
		if k == c {
			return c, true
		}
	}
	return "", false
}

// isLatencyTest reports whether a test measures latency rather than
// bandwidth (perftest *_lat, ucx_perftest *lat tests).
func isLatencyTest(t *Test) bool {
	if strings.HasPrefix(t.Tool, "ib_") {
		return strings.HasSuffix(t.Tool, "_lat")
	}
	if t.Tool == ToolUCXPerftest {
		return strings.HasSuffix(t.Args.Test, "_lat")
	}
	return false
}

// transportsAreTCP reports whether a UCX_TLS list names only TCP (and the
// local self/shared-memory transports), i.e. no RDMA device is needed.
func transportsAreTCP(tls string) bool {
	if strings.TrimSpace(tls) == "" {
		return false
	}
	for _, t := range strings.Split(tls, ",") {
		switch strings.TrimSpace(strings.ToLower(t)) {
		case "tcp", "self", "sm", "shm", "posix", "sysv", "cma", "knem", "xpmem":
		default:
			return false
		}
	}
	return true
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
