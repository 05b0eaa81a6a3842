// Package backend is the seam between the runner and where endpoints live:
// local processes (backend/local), processes on ssh hosts (backend/ssh), or
// Kubernetes pods (backend/kube); backend/remote is what ssh and kube share.
// A backend knows nothing of tools; it provisions endpoints, starts commands
// on them, and removes everything it created.
//
// This file is the whole contract: Backend is what every backend must do;
// the interfaces after it are optional capabilities, each found by a type
// assertion, each saying when the runner uses it and what it does without.
package backend

import (
	"context"
	"errors"
	"io"
	"slices"
	"time"
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
	// DataDevice is the data interface's device when the scenario named
	// another one: the path proof reads its counters, so that traffic that
	// took the named device's network is not called the data network's.
	DataDevice string `json:"dataDevice,omitempty"`
	// NoDevice says why no RDMA device serves the data interface, for
	// the skip reason of RDMA tests ("" when one does, or none was asked).
	NoDevice string `json:"noDevice,omitempty"`
	GPUs     int    `json:"gpus,omitempty"`
	// Address is the data-plane address tools connect to: the secondary
	// network's IP in a pod, the host's data address, 127.0.0.1 locally.
	Address string `json:"address,omitempty"`
	// Network says where Address comes from: a Multus network
	// ("rdma/roce-a") and its Interface in the pod ("net1"), or "pod
	// network" when the pod has no secondary network.
	Network   string            `json:"network,omitempty"`
	Interface string            `json:"interface,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	// Placement is where the endpoint's pod may run and what it is
	// given, resolved by the planner from its pool and the cluster
	// section; nil for local and ssh endpoints.
	Placement *Placement `json:"placement,omitempty"`
	// Container is the container of the endpoint's pod a call runs in:
	// the runner sets it, per call, to the one with the tool's image
	// (Placement.ContainerOf); "" is the tools container. Backends
	// without containers ignore it.
	Container string `json:"-"`
}

// In is the endpoint as seen from the container that runs tools of an
// image family (scenarios.ImageFamily): the same endpoint, its calls run
// in that container.
func (e Endpoint) In(family string) Endpoint {
	e.Container = e.Placement.ContainerOf(family)
	return e
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
	// GPU resource is named), as quantities ("1", "8").
	Resources map[string]string `json:"resources,omitempty"`
	// Networks are the Multus networks attached ("name" or "ns/name"):
	// the pool's, else the cluster's; none on the host network. The
	// first is the data network.
	Networks []string `json:"networks,omitempty"`
	// AntiAffinity is the topology key the pools in AvoidPools (this
	// pool first) must not share; "" places freely.
	AntiAffinity string   `json:"antiAffinity,omitempty"`
	AvoidPools   []string `json:"avoidPools,omitempty"`
	// Capabilities are added to the tools container (every other one is
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
	// Containers are the pod's containers when its pool's tests run in
	// images beside the tools image (cluster.images): the tools container
	// first, then one per further image. nil: the tools container alone,
	// given everything.
	Containers []Container `json:"containers,omitempty"`
}

// ToolsContainer is the name of the container of the tools image, in
// every pod: rdmabench, perftest, rping, ucx_perftest, iperf3.
const ToolsContainer = "tools"

// Container is one container of an endpoint's pod and what it is given.
// Every container gets the pod's CPU and memory, /dev/shm, DRA claims,
// capabilities and env; the device-plugin resources go where the traffic
// is: a device plugin gives a device to the container that asks for it.
type Container struct {
	// Name is "tools", or the image families it serves joined by '-'
	// (nixl, nccl, nixl-nccl): what `kubectl exec -c` takes.
	Name  string `json:"name"`
	Image string `json:"image"`
	// Families are the image families whose tools run here ("" for the
	// tools image's own).
	Families []string `json:"families"`
	// GPU: the pod's GPU resources (nvidia.com/gpu …) are this
	// container's: its tools use GPU memory. At most one has it.
	GPU bool `json:"gpu,omitempty"`
	// RDMA: its tools move RDMA traffic, so it asks for the pod's other
	// extended resources (the RDMA device plugin's) and hugepages; with
	// none that does, the tools container asks.
	RDMA bool `json:"rdma,omitempty"`
}

// ContainerOf is the container that runs tools of an image family: ""
// for the tools container (and outside pods).
func (p *Placement) ContainerOf(family string) string {
	if p == nil || family == "" {
		return ""
	}
	for _, c := range p.Containers {
		if c.Name != ToolsContainer && slices.Contains(c.Families, family) {
			return c.Name
		}
	}
	return ""
}

// ContainerNamed is the container of that name (ToolsContainer for "").
func (p *Placement) ContainerNamed(name string) (Container, bool) {
	if name == "" {
		name = ToolsContainer
	}
	if p != nil {
		for _, c := range p.Containers {
			if c.Name == name {
				return c, true
			}
		}
	}
	return Container{}, false
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

// Command is one process to start on an endpoint.
type Command struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
	// Stdout and Stderr receive the process output as it is produced.
	Stdout io.Writer `json:"-"`
	Stderr io.Writer `json:"-"`
}

// Exit is how a process ended.
type Exit struct {
	Code     int           // exit status; -1 when killed by a signal
	Signaled bool          // killed by a signal (timeout, Ctrl-C)
	Elapsed  time.Duration // wall time from start to exit
}

// Process is a started command. Its whole process group (remote too) is
// killed by Kill; Wait returns when it exits or ctx ends (then it kills).
type Process interface {
	Wait(ctx context.Context) (Exit, error)
	Kill() error
}

// Backend provisions endpoints and runs commands on them.
type Backend interface {
	// Name is "local", "ssh" or "kube".
	Name() string
	// Provision creates (or checks) every endpoint and returns them with
	// Address and placement filled. Bounded by ctx.
	Provision(ctx context.Context, eps []Endpoint) ([]Endpoint, error)
	// Start starts cmd on ep and returns at once.
	Start(ctx context.Context, ep Endpoint, cmd Command) (Process, error)
	// Exec runs a short command to completion and returns its stdout
	// (reading /proc/net/tcp for readiness, tool versions, discovery).
	Exec(ctx context.Context, ep Endpoint, argv []string) ([]byte, error)
	// Cleanup kills every process and removes every object the backend
	// created for this run. It must work on a fresh context after Ctrl-C.
	Cleanup(ctx context.Context) error
}

// The optional capabilities. A backend implements those it can; the runner
// asks for each with a type assertion at the moment named in its comment.

// StdinExecer is a Backend whose short commands can be fed stdin. Secrets
// (the MPI launcher's private keys) travel there and never in argv, which
// shows in process lists, in error messages and, on Kubernetes, in the
// exec request's URL that an apiserver's audit log records.
//
// Used by the MPI launcher (runner/mpi) before a multi-endpoint NCCL leg;
// without it such a leg fails with the reason.
type StdinExecer interface {
	// ExecStdin is Exec with stdin as the command's standard input. Its
	// errors name the command but never the input.
	ExecStdin(ctx context.Context, ep Endpoint, argv []string, stdin []byte) ([]byte, error)
}

// LineRater reads an endpoint's NIC rate, for `lineRate: auto`.
//
// Used once the endpoints exist (the kube backend can read a NIC only from
// inside its pod); without it `lineRate: auto` resolves to no line rate and
// results are not held against one.
type LineRater interface {
	// LineRate is the NIC's rate in bits/s and where it was read.
	LineRate(ctx context.Context, ep Endpoint) (bps float64, detail string, ok bool)
}

// RDMAChecker tells whether an endpoint has a usable RDMA device.
//
// Used by the planner's skip list and before each job: RDMA-only tests are
// skipped, with the reason, where an endpoint has none. Without it the
// runner looks at this host's devices: the planner always, the skips
// where the endpoints share this host (HostSharer).
type RDMAChecker interface {
	HasRDMA(ctx context.Context, ep Endpoint) bool
}

// GPUChecker tells whether an endpoint sees a GPU: the kube backend, where
// the GPU device plugin puts /dev/nvidiaN into pods given nvidia.com/gpu.
//
// Used before each job that needs GPU memory (nccl-tests, nixlbench with a
// VRAM segment): such a test is skipped there, with the reason, instead of
// failing as a broken tool would. Without it (local, ssh) the tool itself
// says it found no GPU.
type GPUChecker interface {
	HasGPU(ctx context.Context, ep Endpoint) bool
}

// Fingerprinter describes the system an endpoint runs on (kernel, NIC
// firmware, MTU: report.Fingerprint* keys).
//
// Used once the endpoints exist, on the first one, for the report's
// fingerprint, so that compare can warn when two runs measured different
// systems. Without it the fingerprint is unknown.
type Fingerprinter interface {
	Fingerprint(ctx context.Context, ep Endpoint) map[string]string
}

// EtcdHoster runs nixlbench's etcd beside the endpoints, for backends whose
// endpoints cannot reach an etcd on this host (pods).
//
// Used after provisioning, when the plan holds a nixlbench job that runs.
// StartEtcd returns the URL the tools use and the one this process uses (a
// port-forward); Cleanup removes both. Without it the runner starts the
// embedded etcd in this process and every endpoint uses its URL.
type EtcdHoster interface {
	StartEtcd(ctx context.Context) (toolURL, localURL string, err error)
}

// Keeper is a backend whose endpoints can outlive the run, so that
// `--keep` leaves them in place for debugging (processes on ssh hosts,
// pods).
//
// Used when the run ends with --keep, instead of Cleanup: KeepHint says
// how to remove what was left (`rdmabench clean --run ID -n NAMESPACE`;
// "": the runner's generic hint, "remove them with rdmabench clean").
// Without it --keep does not apply and Cleanup runs as usual: the
// endpoints are this process's children (local), nothing is left to
// inspect in them.
type Keeper interface {
	KeepHint() string
}

// HostSharer is a backend whose endpoints are processes of this host:
// they see its files and its devices as rdmabench does (local).
//
// Used for a leg's ${out} folder, made in the run's results folder rather
// than in /tmp of each endpoint through Exec, and by the skips of a
// backend without RDMAChecker, which then look at this host's devices.
// Without it (or with SharesHost false) the endpoints are elsewhere.
type HostSharer interface {
	SharesHost() bool
}

// PodRunner is a backend whose endpoints are Kubernetes pods: what a pod
// is given (devices, GPUs, IPC_LOCK) is its spec's doing (kube).
//
// Used by preflight (preflight.Want.Pod): there a missing GPU or IPC_LOCK
// dooms the tests that need it and the fix names what the pod should
// request. Without it (or with RunsInPods false) the endpoints are hosts:
// a missing GPU is a warning (the GPU tool decides), and IPC_LOCK is
// checked only where the memlock limit is finite.
type PodRunner interface {
	RunsInPods() bool
}

// CleanupBounder says how long Cleanup may take, where that is longer
// than killing processes: pods take a while to go, and an apiserver that
// is restarting is waited for (kube).
//
// Used by `rdmabench run` for the run's clean-up bound
// (runner.Config.CleanupTimeout); without it the runner's default (30s).
type CleanupBounder interface {
	CleanupBound() time.Duration
}

// PlatformDetector tells the Kubernetes platform the endpoints' pods run
// on (scenarios.Platform*: cluster.platform, else detected), for what
// differs between platforms (on EKS the fabric is EFA: tests that need RC
// are set aside, nixlbench takes LIBFABRIC, NCCL needs its net plugin).
//
// Used by `rdmabench run` and `rdmabench preflight` before planning, for
// the planner and preflight. Without it there is no platform ("").
type PlatformDetector interface {
	Platform(ctx context.Context) (string, error)
}

// ErrEndpointLost is in the chain of an error of an endpoint that is gone
// for the rest of the run: its pod deleted or evicted, its node lost.
// Waiting on it (a readiness poll) or trying again is pointless; the
// error's text says what was lost.
var ErrEndpointLost = errors.New("endpoint lost")
