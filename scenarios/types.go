// Package scenarios loads, defaults and validates rdmabench scenario files:
// which pods (or processes) to create, how to place them, and which tests to
// run between them. Loading is strict and every error names FILE:LINE:COL.
package scenarios

import "github.com/rdmabench/rdmabench/tool"

// APIVersion is the only scenario version this build reads.
const APIVersion = "rdmabench.io/v1alpha1"

// Kind is the only document kind a scenario file holds.
const Kind = "Scenario"

// Backends.
const (
	BackendLocal = "local"
	BackendSSH   = "ssh"
	BackendKube  = "kube"
)

// Platforms (cluster.platform): what kind of cluster the pods go to.
const (
	PlatformAuto       = "auto"
	PlatformKubernetes = "kubernetes"
	PlatformOpenShift  = "openshift"
	PlatformGKE        = "gke"
	PlatformEKS        = "eks"
)

// Patterns: how the endpoints of the from and to pools are paired.
const (
	PatternPairwise  = "pairwise"
	PatternAllToAll  = "all-to-all"
	PatternRing      = "ring"
	PatternOneToMany = "one-to-many"
	PatternManyToOne = "many-to-one"
)

// Pos is a 1-based position in the scenario file.
type Pos struct {
	Line int `json:"line,omitempty" yaml:"-"`
	Col  int `json:"col,omitempty" yaml:"-"`
}

// Scenario is one scenario document.
type Scenario struct {
	APIVersion string   `yaml:"apiVersion" json:"apiVersion"`
	Kind       string   `yaml:"kind" json:"kind"`
	Metadata   Metadata `yaml:"metadata" json:"metadata"`

	// Backend is where endpoints live: local (processes on this host),
	// ssh (processes on named hosts) or kube (pods). Default local.
	Backend string `yaml:"backend,omitempty" json:"backend,omitempty" schema:"enum=backends"`

	// Cluster holds the Kubernetes settings (kube backend).
	Cluster *Cluster `yaml:"cluster,omitempty" json:"cluster,omitempty"`
	// Hosts are the machines of the ssh backend, referred to by pools.
	Hosts []Host `yaml:"hosts,omitempty" json:"hosts,omitempty"`

	// LineRate is what the NICs promise ("400Gb/s") or "auto" to read it
	// from the NIC. Every bandwidth result is compared against it.
	LineRate Rate `yaml:"lineRate,omitempty" json:"lineRate,omitempty"`

	// Defaults apply to every pool and test that does not say otherwise.
	Defaults Defaults `yaml:"defaults,omitempty" json:"defaults,omitempty"`

	Pools []Pool `yaml:"pools" json:"pools"`
	Tests []Test `yaml:"tests" json:"tests"`

	// Serving describes the LLM serving setup the fabric is for (model
	// shape, context lengths, TP sizes), so that the report can say what
	// the KV-cache transfer adds to time-to-first-token.
	Serving *Serving `yaml:"serving,omitempty" json:"serving,omitempty"`

	// File is the path the scenario was read from (not part of the YAML).
	File string `yaml:"-" json:"-"`
	// Positions tells where each field was written (nil for a scenario
	// built in code); validation and the planner use it for file:line:col.
	Positions *Positions `yaml:"-" json:"-"`
}

// Metadata names the scenario.
type Metadata struct {
	Name        string            `yaml:"name" json:"name"`
	Description string            `yaml:"description,omitempty" json:"description,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
}

// Cluster is how pods are created on Kubernetes or OpenShift.
type Cluster struct {
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Image is the image of a pod's one container, in which every test
	// of the pod runs: the serving image (its NCCL, NIXL, UCX, CUDA; the
	// pods that measure are the pods that serve), or the tools image (make
	// image) for CPU-only scenarios.
	Image string `yaml:"image,omitempty" json:"image,omitempty"`
	// ToolsImage is rdmabench's tools image, run as the pod's init
	// container: it copies rdmabench and its RDMA tool bundle (perftest,
	// rping, iperf3 with their own loader and libraries) into an emptyDir
	// on the PATH of the one container. Unset: Image (a CPU-only scenario
	// whose image is the tools image). ToolsImageOf resolves it.
	ToolsImage string `yaml:"toolsImage,omitempty" json:"toolsImage,omitempty"`
	// Images named one container per tool family (nixl, nccl, perftest)
	// beside the tools one. Gone: two containers split the pod's one VF.
	// Kept so that a scenario still naming it is told what to write
	// instead (validation refuses it), not "unknown field".
	Images map[string]string `yaml:"images,omitempty" json:"images,omitempty"`
	// Networks are Multus NetworkAttachmentDefinition names ("ns/name" or
	// "name") attached as secondary networks (SR-IOV or host-device).
	Networks []string `yaml:"networks,omitempty" json:"networks,omitempty"`
	// Resources are extended resources each pod requests and limits,
	// e.g. {"rdma/roce_gdr": "1", "nvidia.com/gpu": "8"}.
	Resources map[string]string `yaml:"resources,omitempty" json:"resources,omitempty"`
	// Capabilities RDMA needs, e.g. IPC_LOCK (pinned memory), SYS_RESOURCE.
	Capabilities []string `yaml:"capabilities,omitempty" json:"capabilities,omitempty"`
	Privileged   bool     `yaml:"privileged,omitempty" json:"privileged,omitempty"`
	// AntiAffinity is the topology key pods of one pool (and of pools that
	// must not share a node) are spread over. Default kubernetes.io/hostname.
	AntiAffinity string            `yaml:"antiAffinity,omitempty" json:"antiAffinity,omitempty"`
	NodeSelector map[string]string `yaml:"nodeSelector,omitempty" json:"nodeSelector,omitempty"`
	// ServiceAccount for the pods (OpenShift needs one with a privileged SCC).
	ServiceAccount string `yaml:"serviceAccount,omitempty" json:"serviceAccount,omitempty"`
	// StartupTimeout bounds how long pods may take to become ready.
	StartupTimeout Duration `yaml:"startupTimeout,omitempty" json:"startupTimeout,omitempty"`

	// Tolerations let pods land on tainted nodes (GPU nodes usually are:
	// nvidia.com/gpu:NoSchedule). Pools may add their own.
	Tolerations []Toleration `yaml:"tolerations,omitempty" json:"tolerations,omitempty"`
	// ImagePullPolicy is Always, IfNotPresent or Never; unset leaves the
	// cluster's default (Always for :latest, else IfNotPresent).
	ImagePullPolicy string `yaml:"imagePullPolicy,omitempty" json:"imagePullPolicy,omitempty" schema:"enum=pullPolicies"`
	// ImagePullSecrets name Secrets in the namespace for a private registry.
	ImagePullSecrets []string `yaml:"imagePullSecrets,omitempty" json:"imagePullSecrets,omitempty"`
	// RuntimeClassName selects a RuntimeClass (e.g. nvidia).
	RuntimeClassName string `yaml:"runtimeClassName,omitempty" json:"runtimeClassName,omitempty"`
	// HostNetwork runs pods in the node's network namespace (RDMA shared
	// device setups); Multus networks do not apply then.
	HostNetwork bool `yaml:"hostNetwork,omitempty" json:"hostNetwork,omitempty"`
	// Annotations and Labels are added to every pod (the rdmabench.io/
	// prefix is the tool's own).
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// PriorityClassName for the pods (so benchmarks can preempt, or not).
	PriorityClassName string `yaml:"priorityClassName,omitempty" json:"priorityClassName,omitempty"`
	// Platform is the cluster's kind: auto (default: detected through
	// discovery), kubernetes, openshift (admission by SCCs), gke (networks
	// through GKE's multi-network annotation instead of Multus) or eks
	// (EFA: SRD, not RC).
	Platform string `yaml:"platform,omitempty" json:"platform,omitempty" schema:"enum=platforms"`
	// FailFastWindow is how long a pod may stay unschedulable, or keep
	// failing to get its sandbox or volumes, before the run gives up
	// (default 15s). A pod a node is being added for (the autoscaler's
	// TriggeredScaleUp, a nominated node) waits until StartupTimeout.
	FailFastWindow Duration `yaml:"failFastWindow,omitempty" json:"failFastWindow,omitempty"`

	// CPU and Memory every pod requests and is limited to (requests =
	// limits: Guaranteed QoS), as Kubernetes quantities ("2", "500m",
	// "8Gi"); defaults 2 and 4Gi; pools may set their own.
	CPU    string `yaml:"cpu,omitempty" json:"cpu,omitempty"`
	Memory string `yaml:"memory,omitempty" json:"memory,omitempty"`
	// ShmSize is every pod's /dev/shm, memory-backed (an emptyDir of
	// medium Memory, counted against Memory); default 1Gi (NCCL wants more
	// than the runtime's 64 MiB).
	ShmSize string `yaml:"shmSize,omitempty" json:"shmSize,omitempty"`
	// Hugepages by page size ("2Mi": "1Gi"), requested and limited, and
	// mounted at /dev/hugepages-<size>; none unless asked.
	Hugepages map[string]string `yaml:"hugepages,omitempty" json:"hugepages,omitempty"`
	// ResourceClaims are Dynamic Resource Allocation claims every pod gets
	// (pools add their own).
	ResourceClaims []ResourceClaim `yaml:"resourceClaims,omitempty" json:"resourceClaims,omitempty"`
	// PodPatch is a strategic merge patch applied to every endpoint pod,
	// for what no other key says (a sidecar, volumes, an annotation a
	// webhook wants); checked against the Pod API before anything runs.
	PodPatch map[string]any `yaml:"podPatch,omitempty" json:"podPatch,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// ResourceClaim is a Dynamic Resource Allocation claim of a pod: a claim
// that exists (resourceClaimName) or one made per pod from a template
// (resourceClaimTemplateName); the tools container uses it by name.
type ResourceClaim struct {
	Name                      string `yaml:"name" json:"name"`
	ResourceClaimName         string `yaml:"resourceClaimName,omitempty" json:"resourceClaimName,omitempty"`
	ResourceClaimTemplateName string `yaml:"resourceClaimTemplateName,omitempty" json:"resourceClaimTemplateName,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Toleration is a Kubernetes pod toleration.
type Toleration struct {
	Key string `yaml:"key,omitempty" json:"key,omitempty"`
	// Operator is Equal (default) or Exists.
	Operator string `yaml:"operator,omitempty" json:"operator,omitempty" schema:"enum=tolerationOperators"`
	Value    string `yaml:"value,omitempty" json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute; empty matches all.
	Effect string `yaml:"effect,omitempty" json:"effect,omitempty" schema:"enum=taintEffects"`
	// TolerationSeconds bounds a NoExecute toleration.
	TolerationSeconds *int `yaml:"tolerationSeconds,omitempty" json:"tolerationSeconds,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Host is one machine of the ssh backend.
type Host struct {
	Name    string `yaml:"name" json:"name"`
	Address string `yaml:"address" json:"address"`
	User    string `yaml:"user,omitempty" json:"user,omitempty"`
	Port    int    `yaml:"port,omitempty" json:"port,omitempty"`
	KeyFile string `yaml:"keyFile,omitempty" json:"keyFile,omitempty"`
	// DataAddress is the address the tools use between hosts (the RDMA
	// netdev's IP) when it differs from the ssh address.
	DataAddress string `yaml:"dataAddress,omitempty" json:"dataAddress,omitempty"`
	// Rails are the host's other NICs' data addresses (rail 1 onwards,
	// dataAddress being rail 0): a serving node's one NIC per GPU. Each
	// rail's RDMA device and GID are found from its address where the host
	// runs; perftest measures them rail i to rail i, rping's crossRails
	// every rail to every remote rail.
	Rails []string `yaml:"rails,omitempty" json:"rails,omitempty"`
	// KnownHostsFile overrides ~/.ssh/known_hosts.
	KnownHostsFile string `yaml:"knownHostsFile,omitempty" json:"knownHostsFile,omitempty"`
	// InsecureIgnoreHostKey turns known_hosts checking off (test rigs only).
	InsecureIgnoreHostKey bool `yaml:"insecureIgnoreHostKey,omitempty" json:"insecureIgnoreHostKey,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Defaults for pools and tests.
type Defaults struct {
	// Device is the RDMA device (mlx5_0) or "auto".
	Device string `yaml:"device,omitempty" json:"device,omitempty"`
	// GIDIndex for RoCE; nil means auto (the RoCE v2 IPv4 GID).
	GIDIndex *int `yaml:"gidIndex,omitempty" json:"gidIndex,omitempty"`
	// Env is set for every tool process (NCCL_*, UCX_* …).
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Timeout bounds one job when the test does not say.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Repetitions of each test when the test does not say. Default 1.
	Repetitions *int `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
}

// Pool is a group of endpoints with one role (prefill, decode, ep …).
type Pool struct {
	Name     string `yaml:"name" json:"name"`
	Replicas *int   `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// Hosts (ssh backend) lists the host of each replica, cycling.
	Hosts []string `yaml:"hosts,omitempty" json:"hosts,omitempty"`
	// Devices lists the RDMA device of each replica, cycling (local
	// backend on one host with several NICs).
	Devices []string `yaml:"devices,omitempty" json:"devices,omitempty"`
	// CPUSets (local backend) lists the CPUs of each replica's processes,
	// cycling ("8-9", "0,2"): endpoints of one host kept on cores of their
	// own, as pods with exclusive CPUs are, so that two busy-polling
	// sides never share a core's hyperthreads.
	CPUSets []string `yaml:"cpusets,omitempty" json:"cpusets,omitempty"`
	// GPUs per endpoint (nccl-tests -g on one host, GPU resource on kube).
	GPUs         GPUCount          `yaml:"gpus,omitempty" json:"gpus,omitempty"`
	NodeSelector map[string]string `yaml:"nodeSelector,omitempty" json:"nodeSelector,omitempty"`
	Env          map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Images is refused as cluster.images is (one container per pod).
	Images map[string]string `yaml:"images,omitempty" json:"images,omitempty"`
	// Networks and Resources override the cluster's for this pool.
	Networks  []string          `yaml:"networks,omitempty" json:"networks,omitempty"`
	Resources map[string]string `yaml:"resources,omitempty" json:"resources,omitempty"`
	// AvoidPools lists pools whose pods must not share a node with this
	// pool's (prefill and decode on different nodes, so traffic crosses the fabric).
	AvoidPools []string `yaml:"avoidPools,omitempty" json:"avoidPools,omitempty"`
	// Tolerations are added to the cluster's for this pool's pods.
	Tolerations []Toleration `yaml:"tolerations,omitempty" json:"tolerations,omitempty"`
	// PerNode is how many of the pool's endpoints share one node (kube):
	// a serving node's one pod per GPU or rail. Replicas go to nodes in
	// groups of PerNode (ep-0 and ep-1 on one node, ep-2 and ep-3 on
	// another): a group's pods are held together by required pod affinity
	// and kept from the pool's other groups by anti-affinity, on
	// cluster.antiAffinity's topology key. With one network each pod of a
	// node attaches it (a VF of its own from the network's pool); with
	// PerNode×k networks each gets k of them, the node's i-th endpoint
	// networks[i·k … i·k+k-1] (its own rails). Unset: 1.
	PerNode *int `yaml:"perNode,omitempty" json:"perNode,omitempty"`
	// ShareNodesWith lists pools this pool's pods may share a node with.
	// By default pools that test each other never do: their traffic would
	// not cross the fabric.
	ShareNodesWith []string `yaml:"shareNodesWith,omitempty" json:"shareNodesWith,omitempty"`
	// CPU, Memory, ShmSize and Hugepages replace the cluster's for this
	// pool's pods.
	CPU       string            `yaml:"cpu,omitempty" json:"cpu,omitempty"`
	Memory    string            `yaml:"memory,omitempty" json:"memory,omitempty"`
	ShmSize   string            `yaml:"shmSize,omitempty" json:"shmSize,omitempty"`
	Hugepages map[string]string `yaml:"hugepages,omitempty" json:"hugepages,omitempty"`
	// ResourceClaims are added to the cluster's.
	ResourceClaims []ResourceClaim `yaml:"resourceClaims,omitempty" json:"resourceClaims,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Tool names (package tool's, named here for the scenario's readers).
const (
	ToolIBWriteBW   = tool.IBWriteBW
	ToolIBReadBW    = tool.IBReadBW
	ToolIBSendBW    = tool.IBSendBW
	ToolIBWriteLat  = tool.IBWriteLat
	ToolIBReadLat   = tool.IBReadLat
	ToolIBSendLat   = tool.IBSendLat
	ToolRping       = tool.Rping
	ToolNixlbench   = tool.Nixlbench
	ToolNCCL        = tool.NCCL
	ToolUCXPerftest = tool.UCXPerftest
	ToolIperf3      = tool.Iperf3
)

// Test is one benchmark between pools.
type Test struct {
	Name string `yaml:"name" json:"name"`
	Tool string `yaml:"tool" json:"tool" schema:"enum=tools"`
	// From is the client / initiator side, To the server / target side.
	// For nixlbench READ, From (decode) pulls from To (prefill).
	From    string `yaml:"from,omitempty" json:"from,omitempty" schema:"required"`
	To      string `yaml:"to,omitempty" json:"to,omitempty"`
	Pattern string `yaml:"pattern,omitempty" json:"pattern,omitempty" schema:"enum=patterns"`
	// Sample (all-to-all only) runs K of the matrix's rounds per run, so
	// that each endpoint meets K partners: which K turns with the run's
	// sample seed (by default the day), so successive nights cover the
	// matrix. Unset: the whole matrix.
	Sample *int `yaml:"sample,omitempty" json:"sample,omitempty"`

	Args Args `yaml:"args,omitempty" json:"args,omitempty"`

	Repetitions *int `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
	// Timeout bounds one job of this test; default derived from the args.
	Timeout Duration          `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Requires is "rdma" for tests that need an RDMA device; set by
	// defaults from the tool, and may be overridden ("tcp" for UCX over TCP).
	Requires string `yaml:"requires,omitempty" json:"requires,omitempty" schema:"enum=requirements"`

	Expect Expect `yaml:"expect,omitempty" json:"expect,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Args are the tool arguments a test may set. Each tool reads the ones
// that mean something to it; validation rejects the ones that do not.
type Args struct {
	// Sizes to run; perftest runs one process per size, or Sweep (-a).
	Sizes []Size `yaml:"sizes,omitempty" json:"sizes,omitempty"`
	// Sweep runs perftest -a (2 B … 8 MiB) in one process.
	Sweep bool `yaml:"sweep,omitempty" json:"sweep,omitempty"`
	// QPs is perftest -q.
	QPs int `yaml:"qps,omitempty" json:"qps,omitempty"`
	// Iterations is perftest -n, ucx_perftest -n, nccl-tests -n, nixlbench --num_iter.
	Iterations int `yaml:"iterations,omitempty" json:"iterations,omitempty"`
	// Duration is perftest -D, iperf3 -t.
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Bidirectional is perftest -b, iperf3 --bidir.
	Bidirectional bool `yaml:"bidirectional,omitempty" json:"bidirectional,omitempty"`
	// ConnectionType is perftest -c (RC, UC, UD, DC …).
	ConnectionType string `yaml:"connection,omitempty" json:"connection,omitempty" schema:"enum=connections"`
	// MTU is perftest -m.
	MTU int `yaml:"mtu,omitempty" json:"mtu,omitempty" schema:"enum=mtus"`
	// RDMACM uses rdma_cm for connection setup (perftest -R).
	RDMACM bool `yaml:"rdmaCM,omitempty" json:"rdmaCM,omitempty"`
	// UseCUDA is the GPU index for perftest --use_cuda (GPUDirect).
	UseCUDA *int `yaml:"useCuda,omitempty" json:"useCuda,omitempty"`
	// Count is rping -C.
	Count int `yaml:"count,omitempty" json:"count,omitempty"`
	// CrossRails (rping) connects every rail of the from endpoint to every
	// rail of the to endpoint (rail i to remote rail j, all i and j), one
	// leg per rail pair: the any-to-any reachability WideEP's DeepEP needs.
	CrossRails bool `yaml:"crossRails,omitempty" json:"crossRails,omitempty"`

	// Backend is the NIXL backend: UCX, UCCL, LIBFABRIC (nixlbench --backend).
	Backend string `yaml:"backend,omitempty" json:"backend,omitempty" schema:"enum=nixlBackends"`
	// Runtime is nixlbench's rendezvous (--runtime_type): ETCD (default;
	// through the run's etcd, any number of ranks) or ASIO (two processes,
	// the initiator listens on its data address; for builds without
	// etcd-cpp-apiv3).
	Runtime string `yaml:"runtime,omitempty" json:"runtime,omitempty" schema:"enum=nixlRuntimes"`
	// PerRequest drives nixlbench with one request's KV transfer per
	// context length of the serving section, shaped as vLLM's NIXL
	// connector moves it: block bytes per region and descriptors per READ
	// from the model's KV layout (scenarios.KVLayout). The report sets the
	// measured time beside the computed one.
	PerRequest bool `yaml:"perRequest,omitempty" json:"perRequest,omitempty"`
	// Backends runs nixlbench once per backend, to compare them.
	Backends []string `yaml:"backends,omitempty" json:"backends,omitempty" schema:"enum=nixlBackends"`
	// Op is READ or WRITE (nixlbench --op_type).
	Op string `yaml:"op,omitempty" json:"op,omitempty" schema:"enum=nixlOps"`
	// InitiatorSeg and TargetSeg are DRAM or VRAM.
	InitiatorSeg string `yaml:"initiatorSeg,omitempty" json:"initiatorSeg,omitempty" schema:"enum=segments"`
	TargetSeg    string `yaml:"targetSeg,omitempty" json:"targetSeg,omitempty" schema:"enum=segments"`
	// MinSize and MaxSize bound a sweep (nixlbench block sizes, nccl -b/-e).
	MinSize Size `yaml:"minSize,omitempty" json:"minSize,omitempty"`
	MaxSize Size `yaml:"maxSize,omitempty" json:"maxSize,omitempty"`
	// StepFactor is nccl-tests -f.
	StepFactor int `yaml:"stepFactor,omitempty" json:"stepFactor,omitempty"`
	// MaxBatch is nixlbench --max_batch_size.
	MaxBatch int `yaml:"maxBatch,omitempty" json:"maxBatch,omitempty"`

	// Collective is the nccl-tests operation: all_reduce, all_gather,
	// reduce_scatter, alltoall, sendrecv, broadcast.
	Collective string `yaml:"collective,omitempty" json:"collective,omitempty" schema:"enum=collectives"`
	// DataType is nccl-tests -d.
	DataType string `yaml:"dataType,omitempty" json:"dataType,omitempty" schema:"enum=dataTypes"`

	// Mode is the DeepEP probe's kernel sets: normal (vLLM's
	// deepep_high_throughput), low_latency (deepep_low_latency) or both.
	Mode string `yaml:"mode,omitempty" json:"mode,omitempty" schema:"enum=deepepModes"`
	// Hidden, TopK and Experts are the MoE model's shape (DeepEP probe).
	Hidden  int `yaml:"hidden,omitempty" json:"hidden,omitempty"`
	TopK    int `yaml:"topk,omitempty" json:"topk,omitempty"`
	Experts int `yaml:"experts,omitempty" json:"experts,omitempty"`
	// Tokens and LLTokens are tokens per rank of the normal (prefill) and
	// low-latency (decode) kernels (DeepEP probe).
	Tokens   int `yaml:"tokens,omitempty" json:"tokens,omitempty"`
	LLTokens int `yaml:"llTokens,omitempty" json:"llTokens,omitempty"`
	// Dtype is the DeepEP probe's dispatch type: fp8 or bf16.
	Dtype string `yaml:"dtype,omitempty" json:"dtype,omitempty" schema:"enum=deepepDtypes"`
	// SMs are the SMs of DeepEP's normal kernels (vLLM: 20).
	SMs int `yaml:"sms,omitempty" json:"sms,omitempty"`
	// MoELayers is the model's MoE layers (DeepEP probe: not the probe's
	// own argument; the EP budget multiplies one layer's dispatch +
	// combine by it). 0: DeepSeek-R1's 58.
	MoELayers int `yaml:"moeLayers,omitempty" json:"moeLayers,omitempty"`

	// Test is the ucx_perftest -t test (tag_bw, ucp_put_bw, tag_lat …).
	Test string `yaml:"test,omitempty" json:"test,omitempty" schema:"enum=ucxTests"`
	// Transports is UCX_TLS for ucx_perftest and nixlbench over UCX.
	Transports string `yaml:"transports,omitempty" json:"transports,omitempty"`

	// Streams is iperf3 -P.
	Streams int `yaml:"streams,omitempty" json:"streams,omitempty"`

	// Extra arguments appended verbatim to both sides' command lines.
	Extra []string `yaml:"extra,omitempty" json:"extra,omitempty"`
}

// Expect is what a test must reach to pass.
type Expect struct {
	// MinLineRate is the least bandwidth as a percent of line rate ("90%"),
	// judged on the best size (or on every size in MinSize… when AllSizes).
	MinLineRate Percent `yaml:"minLineRate,omitempty" json:"minLineRate,omitempty"`
	// MinBandwidth is an absolute floor ("350Gb/s").
	MinBandwidth Rate `yaml:"minBandwidth,omitempty" json:"minBandwidth,omitempty"`
	// MinBusBW is the nccl-tests average bus bandwidth floor ("40GB/s").
	MinBusBW Rate `yaml:"minBusBW,omitempty" json:"minBusBW,omitempty"`
	// MaxLatency is a ceiling on average latency ("5us").
	MaxLatency Duration `yaml:"maxLatency,omitempty" json:"maxLatency,omitempty"`
	// MaxP99Latency is a ceiling on the 99th percentile latency.
	MaxP99Latency Duration `yaml:"maxP99Latency,omitempty" json:"maxP99Latency,omitempty"`
	// Transport is "rdma" when a TCP fallback must fail the test.
	Transport string `yaml:"transport,omitempty" json:"transport,omitempty" schema:"enum=requirements"`
	// Affinity is the farthest PCIe relation accepted between a GPU the
	// test uses and its NIC ("PXB": a pair across a host bridge, a NUMA
	// node or the sockets fails the test), as nvidia-smi topo -m names it.
	Affinity string `yaml:"affinity,omitempty" json:"affinity,omitempty" schema:"enum=affinityRelations"`
	// MinPings for rping: at least this many completed pings.
	MinPings int `yaml:"minPings,omitempty" json:"minPings,omitempty"`
	// LowPair retests the low pairs of an all-to-all matrix and names the
	// endpoints they share.
	LowPair *LowPair `yaml:"lowPair,omitempty" json:"lowPair,omitempty"`
}
