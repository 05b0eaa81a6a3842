// Package kube is the backend whose endpoints are pods: one long-lived pod
// per endpoint, created once per run and reused by every test, placed with
// anti-affinity, node selectors, tolerations, Multus secondary networks and
// extended resources. Tools run through the exec subresource, each in a
// process group of its own inside the pod, so a timeout, Ctrl-C or the
// clean-up kills the whole tool. Everything the run creates carries the
// run's labels and is removed by Cleanup, or later by Clean.
package kube

import (
	"fmt"
	"io"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Labels and annotations the backend puts on what it creates.
const (
	LabelRun      = "rdmabench.io/run"
	LabelPool     = "rdmabench.io/pool"
	LabelEndpoint = "rdmabench.io/endpoint"
	// LabelNodeGroup names the pods of a pool that share a node
	// (pools[].perNode): "<pool>-n<group>".
	LabelNodeGroup = "rdmabench.io/node-group"
	LabelCreatedBy = "rdmabench.io/created-by" // on a namespace the run created
	LabelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "rdmabench"

	// NetworksAnnotation asks Multus for secondary networks;
	// NetworkStatusAnnotation is where Multus reports what it attached.
	NetworksAnnotation      = "k8s.v1.cni.cncf.io/networks"
	NetworkStatusAnnotation = "k8s.v1.cni.cncf.io/network-status"

	// container is the name of the tools container in every pod.
	container = "tools"
)

// Options say how to reach the cluster and what to create there.
type Options struct {
	// Client and Config reach the API; Connect fills both from a
	// kubeconfig (or in-cluster config) when they are nil.
	Client kubernetes.Interface
	Config *rest.Config
	// Namespace overrides cluster.namespace (the -n flag).
	Namespace string
	// RunID labels every object; it becomes part of pod names, so it must
	// be a DNS label fragment (NewRunID's form is).
	RunID string
	// Progress receives "n/N pods ready" lines (stderr); nil = silent.
	Progress io.Writer
	// KillGrace is how long a killed tool gets between SIGTERM and SIGKILL
	// (default 2 s). UnschedulableGrace is how long a pod may stay
	// unschedulable, or its sandbox failing, before the run gives up
	// (default cluster.failFastWindow, else DefaultFailFastWindow)
	// (default 5 s). PollInterval paces the readiness wait (default 250 ms).
	KillGrace          time.Duration
	UnschedulableGrace time.Duration
	PollInterval       time.Duration
	// DeleteTimeout bounds waiting for the pods to be gone (default 60 s).
	DeleteTimeout time.Duration
	// CreateParallelism bounds the pod creations in flight (default
	// DefaultCreateParallelism); ExecParallelism the short commands
	// (readiness, discovery, listen tables, kills) in flight, tools' own
	// streams aside (default DefaultExecParallelism).
	CreateParallelism int
	ExecParallelism   int
	// ExecPerCommand runs every command in an exec of its own (--kube-exec
	// per-command) instead of the pod container's session (session.go):
	// one API request and one container exec per command.
	ExecPerCommand bool
}

// Bounds on what the backend has in flight at once: enough to keep a
// 256-pod run busy, few enough that a slow apiserver sees a queue of
// this backend's own, not hundreds of connections.
const (
	DefaultCreateParallelism = 16
	DefaultExecParallelism   = 32
)

// DefaultFailFastWindow is how long a pod may stay unschedulable, or keep
// failing to get its sandbox, before the run gives up, when the scenario
// gives no cluster.failFastWindow: long enough for a CNI that is still
// starting and for a cluster autoscaler to say it is adding a node (it
// looks every 10 s), short beside startupTimeout.
const DefaultFailFastWindow = 15 * time.Second

// Backend runs endpoints as pods.
type Backend struct {
	opts      Options
	client    kubernetes.Interface
	config    *rest.Config
	sc        *scenarios.Scenario
	namespace string

	disc remote.Discovery
	// execSlots bounds the short commands in flight (ExecStdin).
	execSlots chan struct{}

	mu           sync.Mutex
	procs        remote.Tracker[*process]
	pods         map[string]podInfo // endpoint name → its pod
	createdNS    bool
	ownerCreated bool
	binaries     map[string]bool // "endpoint\x00binary" → found
	owner        *metav1.OwnerReference
	stops        []chan struct{}         // port-forwards to end in Cleanup
	killBound    time.Duration           // how long killing one tool may take
	plat         string                  // the platform, once known (platform)
	lost         map[string]error        // pod name → why it is gone (lost.go)
	sessions     map[string]*sessionSlot // "pod\x00container" → its exec session
	// nadResources: each network as the scenario names it → the device
	// plugin resource its NetworkAttachmentDefinition draws from ("" none).
	nadResources map[string]string
	// sessionsClosed: Cleanup closed the sessions; later commands take an exec each.
	sessionsClosed bool
}

// podInfo is what the backend keeps of a provisioned pod.
type podInfo struct {
	name string
	node string
}

// The contract (runner/backend) and the capabilities this backend has.
var (
	_ backend.Backend          = (*Backend)(nil)
	_ backend.StdinExecer      = (*Backend)(nil)
	_ backend.LineRater        = (*Backend)(nil)
	_ backend.RDMAChecker      = (*Backend)(nil)
	_ backend.GPUChecker       = (*Backend)(nil)
	_ backend.Fingerprinter    = (*Backend)(nil)
	_ backend.EtcdHoster       = (*Backend)(nil)
	_ backend.Keeper           = (*Backend)(nil)
	_ backend.PodRunner        = (*Backend)(nil)
	_ backend.CleanupBounder   = (*Backend)(nil)
	_ backend.PlatformDetector = (*Backend)(nil)
)

// New returns a backend for the scenario's cluster section. Nothing is
// created until Provision.
func New(sc *scenarios.Scenario, opts Options) (*Backend, error) {
	if sc == nil || sc.Cluster == nil {
		return nil, fmt.Errorf("kube: the scenario has no cluster section")
	}
	if opts.Client == nil || opts.Config == nil {
		return nil, fmt.Errorf("kube: no API client (use Connect)")
	}
	if err := checkRunID(opts.RunID); err != nil {
		return nil, err
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = 2 * time.Second
	}
	if opts.UnschedulableGrace <= 0 {
		opts.UnschedulableGrace = DefaultFailFastWindow
		if d := sc.Cluster.FailFastWindow.Value; d > 0 {
			opts.UnschedulableGrace = d
		}
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.DeleteTimeout <= 0 {
		opts.DeleteTimeout = 60 * time.Second
	}
	if opts.CreateParallelism <= 0 {
		opts.CreateParallelism = DefaultCreateParallelism
	}
	if opts.ExecParallelism <= 0 {
		opts.ExecParallelism = DefaultExecParallelism
	}
	ns := sc.Cluster.Namespace
	if opts.Namespace != "" {
		ns = opts.Namespace
	}
	b := &Backend{opts: opts, client: opts.Client, config: opts.Config, sc: sc, namespace: ns,
		pods: map[string]podInfo{}, binaries: map[string]bool{}, lost: map[string]error{}, sessions: map[string]*sessionSlot{}, execSlots: make(chan struct{}, opts.ExecParallelism)}
	b.killBound = 3*opts.KillGrace + 10*time.Second
	b.disc = remote.Discovery{Exec: b.Exec, Key: func(ep endpoint.Endpoint) string { return "pod " + b.podName(ep.Name) }, Prefix: "kube"}
	return b, nil
}

// Name is "kube".
func (b *Backend) Name() string { return scenarios.BackendKube }

// RunsInPods is true: every endpoint is a pod.
func (b *Backend) RunsInPods() bool { return true }

// Namespace is where the run's objects live.
func (b *Backend) Namespace() string { return b.namespace }

func (b *Backend) progressf(format string, a ...any) {
	if b.opts.Progress != nil {
		fmt.Fprintf(b.opts.Progress, "rdmabench: "+format+"\n", a...)
	}
}
