package scenarios

import "github.com/rdmabench/rdmabench/tool"

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

// Values of the tools' arguments: package tool's, where each tool's
// argument schema lists them (the JSON schema reads them here).
var (
	NixlBackends  = tool.NixlBackends
	NixlRuntimes  = tool.NixlRuntimes
	NixlOps       = tool.NixlOps
	NixlSegments  = tool.NixlSegments
	Connections   = tool.Connections
	MTUs          = tool.MTUs
	NCCLDataTypes = tool.NCCLDataTypes
	UCXTests      = tool.UCXTests
	DeepEPModes   = tool.DeepEPModes
	DeepEPDtypes  = tool.DeepEPDtypes
)

// nixlbench runtimes.
const (
	NixlRuntimeETCD = tool.NixlRuntimeETCD
	NixlRuntimeASIO = tool.NixlRuntimeASIO
)

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

// AffinityRelations are the GPU↔NIC relations of nvidia-smi topo -m,
// nearest first: one PCIe switch (PIX), several (PXB), a host bridge
// (PHB), host bridges of one NUMA node (NODE), the sockets (SYS).
var AffinityRelations = []string{"PIX", "PXB", "PHB", "NODE", "SYS"}

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

// Settings is what the tool table's decisions read of the test.
func (t *Test) Settings() tool.Settings {
	a := &t.Args
	return tool.Settings{Transports: a.Transports, InitiatorSeg: a.InitiatorSeg, TargetSeg: a.TargetSeg,
		UseCUDA: a.UseCUDA != nil, UCXTest: a.Test}
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
