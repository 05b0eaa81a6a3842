// Package backend is the seam between the runner and where endpoints live:
// local processes (backend/local), processes on ssh hosts (backend/ssh), or
// Kubernetes pods (backend/kube); backend/remote is what ssh and kube share.
// A backend knows nothing of tools; it provisions endpoints (their data
// model is runner/endpoint), starts commands on them, and removes
// everything it created.
//
// This file is the whole contract: Backend is what every backend must do;
// the interfaces after it are optional capabilities, each found by a type
// assertion, each saying when the runner uses it and what it does without.
package backend

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

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
	Provision(ctx context.Context, eps []endpoint.Endpoint) ([]endpoint.Endpoint, error)
	// Start starts cmd on ep and returns at once.
	Start(ctx context.Context, ep endpoint.Endpoint, cmd Command) (Process, error)
	// Exec runs a short command to completion and returns its stdout
	// (reading /proc/net/tcp for readiness, tool versions, discovery).
	Exec(ctx context.Context, ep endpoint.Endpoint, argv []string) ([]byte, error)
	// Cleanup kills every process and removes every object the backend
	// created for this run. It must work on a fresh context after Ctrl-C.
	Cleanup(ctx context.Context) error
}

// The optional capabilities. A backend implements those it can; the runner
// (or the command, for the run's settings) asks for each with a type
// assertion at the moment named in its comment. Nothing decides by a
// backend's name or concrete type (TestNoBackendNameChecks): a behaviour
// that differs between backends is a capability here.

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
	ExecStdin(ctx context.Context, ep endpoint.Endpoint, argv []string, stdin []byte) ([]byte, error)
}

// LineRater reads an endpoint's NIC rate, for `lineRate: auto`.
//
// Used once the endpoints exist (the kube backend can read a NIC only from
// inside its pod); without it `lineRate: auto` resolves to no line rate and
// results are not held against one.
type LineRater interface {
	// LineRate is the NIC's rate in bits/s and where it was read.
	LineRate(ctx context.Context, ep endpoint.Endpoint) (bps float64, detail string, ok bool)
}

// RDMAChecker tells whether an endpoint has a usable RDMA device.
//
// Used by the planner's skip list and before each job: RDMA-only tests are
// skipped, with the reason, where an endpoint has none. Without it the
// runner looks at this host's devices: the planner always, the skips
// where the endpoints share this host (HostSharer).
type RDMAChecker interface {
	HasRDMA(ctx context.Context, ep endpoint.Endpoint) bool
}

// GPUChecker tells whether an endpoint sees a GPU: the kube backend, where
// the GPU device plugin puts /dev/nvidiaN into pods given nvidia.com/gpu.
//
// Used before each job that needs GPU memory (nccl-tests, nixlbench with a
// VRAM segment): such a test is skipped there, with the reason, instead of
// failing as a broken tool would. Without it (local, ssh) the tool itself
// says it found no GPU.
type GPUChecker interface {
	HasGPU(ctx context.Context, ep endpoint.Endpoint) bool
}

// Fingerprinter describes the system an endpoint runs on (kernel, NIC
// firmware, MTU: schema.Fingerprint* keys).
//
// Used once the endpoints exist, on the first one, for the report's
// fingerprint, so that compare can warn when two runs measured different
// systems. Without it the fingerprint is unknown.
type Fingerprinter interface {
	Fingerprint(ctx context.Context, ep endpoint.Endpoint) map[string]string
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
