// Package endpoint is the data model of where a tool process runs: an
// Endpoint (a local process slot, an ssh host, a pod) and, for pods, its
// Placement. The planner fills it (runner/plan), the tool
// table reads it (runner/tools), the backends (runner/backend) provision
// it. It imports nothing of theirs: the pure planner depends on no backend
// interface.
package endpoint

import (
	"strconv"
	"strings"
)

// Endpoint is one place a tool process runs: a local process slot, an ssh
// host, or a pod. The planner fills the static fields; Provision fills Address
// (and Node, Host details) once the endpoint exists.
type Endpoint struct {
	Name  string `json:"name"`  // "prefill-0"
	Pool  string `json:"pool"`  // "prefill"
	Index int    `json:"index"` // replica index inside the pool
	// Host is the ssh host name (ssh backend).
	Host string `json:"host,omitempty"`
	// Node is the Kubernetes node the pod landed on (kube backend).
	Node string `json:"node,omitempty"`
	// Pod is the endpoint's pod (kube backend).
	Pod string `json:"pod,omitempty"`
	// Device is the RDMA device ("mlx5_0", "rxe0"); "" when none. Port
	// is its port the tests use (0: the tool's default, 1), GIDIndex the
	// GID on RoCE (nil: the tool's choice, or InfiniBand).
	Device   string `json:"device,omitempty"`
	Port     int    `json:"port,omitempty"`
	GIDIndex *int   `json:"gidIndex,omitempty"`
	// ResolveDevice: the scenario names no device, so each endpoint's is
	// chosen where it runs, from its data interface (the backend's
	// Provision); the planner writes the tools' device, port and GID as
	// placeholders (tools.DevicePlaceholder …) the runner fills then.
	ResolveDevice bool `json:"resolveDevice,omitempty"`
	// DeviceFrom says how Device was chosen ("network-status device-info:
	// rdma-device mlx5_3", "netdev net1", "GID of 10.9.1.1", "scenario").
	DeviceFrom string `json:"deviceFrom,omitempty"`
	// NICPort names the physical port Device sends on ("PCI 0000:3b:00.0
	// port 1", an SR-IOV VF's being its PF's; nic.Inventory.PortID): two
	// endpoints of one node with one NICPort share its line rate.
	NICPort string `json:"nicPort,omitempty"`
	// DataDevice is the data interface's device when the scenario named
	// another one: the path proof reads its counters, so that traffic that
	// took the named device's network is not called the data network's.
	DataDevice string `json:"dataDevice,omitempty"`
	// NoDevice says why no RDMA device serves the data interface, for
	// the skip reason of RDMA tests ("" when one does, or none was asked).
	NoDevice string `json:"noDevice,omitempty"`
	GPUs     int    `json:"gpus,omitempty"`
	// CPUSet is the CPUs its processes run on (pools[].cpusets, local
	// backend: "8-9"); "" for any.
	CPUSet string `json:"cpuSet,omitempty"`
	// GPUsFrom says how GPUs was counted for a pool's gpus: all.
	GPUsFrom string `json:"gpusFrom,omitempty"`
	// VisibleGPUs is the CUDA_VISIBLE_DEVICES its GPU tools get where
	// several endpoints share one host's GPUs (the local backend): its own
	// GPUs first, so that a tool's GPU 0 is the endpoint's (prefill on GPU
	// 0, decode on GPU 1), then the host's others, so that peer access
	// (NVLink, UCX cuda_ipc, NCCL P2P) still sees every GPU. "" where each
	// endpoint has a host (or pod) of its own.
	VisibleGPUs string `json:"visibleGpus,omitempty"`
	// Address is the data-plane address tools connect to: the secondary
	// network's IP in a pod, the host's data address, 127.0.0.1 locally.
	Address string `json:"address,omitempty"`
	// Network says where Address comes from: a Multus network
	// ("rdma/roce-a") and its Interface in the pod ("net1"), or "pod
	// network" when the pod has no secondary network.
	Network   string            `json:"network,omitempty"`
	Interface string            `json:"interface,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	// Rails are every secondary network of a pod that attaches more than
	// one (a serving node's one VF per GPU), rail 0 being the data network
	// above; nil for a pod with one network (or none) and off Kubernetes.
	Rails []Rail `json:"rails,omitempty"`
	// Affinity is the PCIe relation of each GPU the endpoint uses to the
	// NIC it uses (nvidia-smi topo -m): its device, or its nearest rail;
	// nil without GPUs or a matrix that lists it.
	Affinity []GPUNIC `json:"affinity,omitempty"`
	// Placement is where the endpoint's pod may run and what it is
	// given, resolved by the planner from its pool and the cluster
	// section; nil for local and ssh endpoints.
	Placement *Placement `json:"placement,omitempty"`
}

// Placement is what a pod-based backend needs of an endpoint's pool, with
// the pool's settings already laid over the cluster's, so that the
// backend reads it here and never goes back to the scenario.
type Placement struct {
	// NodeSelector: the cluster's, the pool's entries on top.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations: the cluster's, then the pool's.
	Tolerations []Toleration `json:"tolerations,omitempty"`
	// Resources are extended resources requested and limited (the
	// cluster's, the pool's on top, pool.gpus as nvidia.com/gpu unless a
	// GPU resource is named: scenarios.IsGPUResource), as quantities ("1", "8").
	Resources map[string]string `json:"resources,omitempty"`
	// Networks are the Multus networks attached ("name" or "ns/name"):
	// the pool's, else the cluster's; none on the host network. The
	// first is the data network.
	Networks []string `json:"networks,omitempty"`
	// AntiAffinity is the topology key the pools in AvoidPools (this
	// pool first) must not share; "" places freely.
	AntiAffinity string   `json:"antiAffinity,omitempty"`
	AvoidPools   []string `json:"avoidPools,omitempty"`
	// NodeGroup is set where the pool puts several endpoints on one node
	// (pools[].perNode): the endpoints of one group ("ep-n0") share a
	// topology domain (required pod affinity) and avoid the pool's other
	// groups, instead of every other endpoint of the pool; AvoidPools'
	// other pools are still avoided. PerNode is the group's size.
	NodeGroup string `json:"nodeGroup,omitempty"`
	PerNode   int    `json:"perNode,omitempty"`
	// Capabilities are added to the pod's container (every other one is
	// dropped): the cluster's (IPC_LOCK by default), plus what the MPI
	// launcher's per-run sshd needs on a pool that hosts remote ranks
	// (tools.SSHDCapabilities).
	Capabilities []string `json:"capabilities,omitempty"`
	// CPU and Memory are requested and limited alike (Guaranteed QoS);
	// ShmSize is the memory-backed /dev/shm; Hugepages are by page size;
	// all Kubernetes quantities, the pool's over the cluster's.
	CPU       string            `json:"cpu,omitempty"`
	Memory    string            `json:"memory,omitempty"`
	ShmSize   string            `json:"shmSize,omitempty"`
	Hugepages map[string]string `json:"hugepages,omitempty"`
	// ResourceClaims are DRA claims (the cluster's, then the pool's).
	ResourceClaims []ResourceClaim `json:"resourceClaims,omitempty"`
}

// ResourceClaim is a pod's Dynamic Resource Allocation claim: an existing
// ResourceClaim, or one made per pod from a ResourceClaimTemplate.
type ResourceClaim struct {
	Name         string `json:"name"`
	ClaimName    string `json:"resourceClaimName,omitempty"`
	TemplateName string `json:"resourceClaimTemplateName,omitempty"`
}

// Toleration is a pod toleration, as the Kubernetes API spells it.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"`
	// Seconds bounds a NoExecute toleration (nil: forever).
	Seconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Rail is one secondary network of a multi-rail pod: its interface and
// address, and the RDMA device, port, GID and line rate behind it, found
// as the data network's are (network-status device-info, else the
// interface). Device "" with NoDevice set: no RDMA device serves it.
type Rail struct {
	Network    string  `json:"network"`
	Interface  string  `json:"interface,omitempty"`
	Address    string  `json:"address,omitempty"`
	Device     string  `json:"device,omitempty"`
	Port       int     `json:"port,omitempty"`
	GIDIndex   *int    `json:"gidIndex,omitempty"`
	RateBps    float64 `json:"rateBps,omitempty"`
	DeviceFrom string  `json:"deviceFrom,omitempty"`
	NoDevice   string  `json:"noDevice,omitempty"`
}

// RailName names rail i of an endpoint where a plan refers to it before
// it exists (its device and port placeholders): "decode-0#1". Rail 0 is
// the endpoint itself.
func RailName(endpoint string, i int) string {
	if i == 0 {
		return endpoint
	}
	return endpoint + "#" + strconv.Itoa(i)
}

// GPUNIC is one GPU and the NIC it uses (the pod's one NIC, or its
// nearest rail): their relation (PIX, PXB, PHB, NODE, SYS: nearest to
// farthest), and the host's nearer NIC where a one-NIC pod has a farther
// one.
type GPUNIC struct {
	GPU             string `json:"gpu"`
	Device          string `json:"device"`
	Relation        string `json:"relation"`
	Nearest         string `json:"nearest,omitempty"`
	NearestRelation string `json:"nearestRelation,omitempty"`
}

// OwnGPUs are the host's GPUs (by index, GPU0 = 0) the endpoint's tools
// use: the first GPUs of VisibleGPUs where the endpoint shares its host's
// GPUs, else the first GPUs of its host or pod.
func (ep Endpoint) OwnGPUs() []int {
	var own []int
	if ep.VisibleGPUs != "" {
		for _, f := range strings.Split(ep.VisibleGPUs, ",") {
			if len(own) == ep.GPUs {
				break
			}
			g, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil // a UUID or MIG name: not an index of the matrix
			}
			own = append(own, g)
		}
		return own
	}
	for g := range ep.GPUs {
		own = append(own, g)
	}
	return own
}
