package scenarios

import (
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

// What the scenario loader knows of each tool (the arguments and
// expectations that mean something to it, whether it runs only over RDMA,
// its image) is package tool's description; validation and the JSON schema
// read it there.

// Tools lists the tool names a test may use.
var Tools = tool.Names()

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
var Collectives = tool.Collectives

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

// NCCLDataTypes are nccl-tests -d values (the tool table's).
var NCCLDataTypes = tool.NCCLDataTypes

// UCXTests are ucx_perftest -t tests (UCP and UCT).
var UCXTests = []string{"tag_lat", "tag_bw", "tag_sync_lat", "tag_sync_bw",
	"ucp_put_lat", "ucp_put_bw", "ucp_get", "ucp_add", "ucp_fadd", "ucp_swap", "ucp_cswap",
	"stream_bw", "stream_lat", "ucp_am_lat", "ucp_am_bw",
	"am_lat", "put_lat", "add_lat", "get", "fadd", "swap", "cswap", "am_bw", "put_bw", "get_bw", "add_mr"}

// Image families: the images a scenario names beside the tools image
// (cluster.images, pools[].images), each the one its tools run in. The
// GPU tools come from the image people already serve with; this project
// never builds them.
const (
	// ImageNixl carries nixlbench, NIXL (with the plugins of the backends
	// under test) and UCX: NIXL's nixlbench container, or a serving image
	// that has nixlbench.
	ImageNixl = "nixl"
	// ImageNCCL carries nccl-tests with NCCL, and Open MPI and sshd for
	// ranks on several pods.
	ImageNCCL = "nccl"
	// ImagePerftest carries perftest built with CUDA (--use_cuda); unset,
	// perftest runs in the tools image (Debian's perftest, without CUDA).
	ImagePerftest = "perftest"
)

// ImageFamilies lists the keys of cluster.images and pools[].images.
var ImageFamilies = []string{ImageNixl, ImageNCCL, ImagePerftest}

// ImageFamily is the image family a tool runs in: its own (nixl, nccl),
// perftest's (which the tools image stands in for), "" the tools image.
func ImageFamily(name string) string {
	if spec, ok := tool.Lookup(name); ok {
		return spec.ImageFamily
	}
	return ""
}

// Requirements a test may declare.
const (
	RequiresRDMA = "rdma"
	RequiresTCP  = "tcp"
)

// Requirements lists test.requires values.
var Requirements = []string{RequiresRDMA, RequiresTCP}

// RDMAOnly says whether a tool runs only over RDMA (perftest, rping): a
// test of it may not say requires: tcp. Tools whose transport a test
// chooses (ucx_perftest, nixlbench), nccl (placement decides) and iperf3
// (TCP) are not.
func RDMAOnly(name string) bool {
	spec, ok := tool.Lookup(name)
	return ok && spec.RDMAOnly()
}

// collective: the tool runs one job of every endpoint of from and to (no
// pattern, no pairs).
func collective(name string) bool {
	spec, ok := tool.Lookup(name)
	return ok && spec.Collective
}

// dataTypes are the args.dataType values a test of the tool may write.
func dataTypes(name string) []string {
	if spec, ok := tool.Lookup(name); ok {
		return spec.DataTypes
	}
	return nil
}

// toolArgs are the args keys a test of the tool may write (nil for a tool
// the table does not know).
func toolArgs(name string) []string {
	if spec, ok := tool.Lookup(name); ok {
		return spec.Args
	}
	return nil
}

// Settings is what the tool table's decisions read of the test.
func (t *Test) Settings() tool.Settings {
	a := &t.Args
	return tool.Settings{Transports: a.Transports, InitiatorSeg: a.InitiatorSeg, TargetSeg: a.TargetSeg,
		UseCUDA: a.UseCUDA != nil, UCXTest: a.Test}
}

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

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
