package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	runetcd "github.com/rdmabench/rdmabench/runner/etcd"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/mpi"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Config is one run: what to execute, where, and where results go.
type Config struct {
	Plan    *plan.Plan
	Backend backend.Backend
	// Scenario supplies each test's expectation and requirements; nil
	// judges only whether a measurement was made.
	Scenario *scenarios.Scenario
	// ScenarioBytes is written as scenario.yaml (the scenario as run).
	ScenarioBytes []byte
	// ScenarioHash is the sha256 of the scenario file's bytes; default:
	// of ScenarioBytes.
	ScenarioHash string
	// OutDir is the results folder; created if absent.
	OutDir  string
	RunID   string
	Version string
	// LineRate results are judged against (ResolveLineRate); nil = none.
	LineRate *schema.LineRate
	// Fingerprint of the system measured (BackendFingerprint), for
	// RunMeta.Fingerprint; nil = unknown.
	Fingerprint map[string]string
	// Discover, when set, is called once the endpoints exist to fill
	// LineRate and Fingerprint from them: the kube backend can read a NIC
	// only from inside its pod, which does not exist before Provision.
	Discover func(ctx context.Context, eps []endpoint.Endpoint) (*schema.LineRate, map[string]string)
	Parse    ParseFunc
	// Progress receives one line per leg (stderr); nil = silent.
	Progress io.Writer
	// HasRDMA says whether RDMA devices exist where endpoints run; nil
	// asks the backend (backend.RDMAChecker), else uses DetectRDMA (this
	// host) where the endpoints share it (backend.HostSharer).
	HasRDMA func() (bool, string)
	// EtcdURL is an etcd to use instead of starting the embedded one.
	EtcdURL string
	// ExitGrace is how long servers may outlive their client (default 5s).
	ExitGrace time.Duration
	// CleanupTimeout bounds the clean-up after the run (default 30s).
	CleanupTimeout time.Duration
	// Keep leaves endpoints (pods, processes on ssh hosts) for debugging,
	// where the backend can (backend.Keeper); local processes are always
	// killed since nothing is left to inspect in them.
	Keep bool
	// NoPreflight skips the preflight checks (runner/preflight).
	NoPreflight bool
	// PreflightTimeout bounds each endpoint's preflight reading (0: the
	// default, preflight.DefaultTimeout).
	PreflightTimeout time.Duration
	// NoPathProof skips reading the RDMA port counters around each leg.
	NoPathProof bool
	// AllowEmpty lets a run that measured nothing (every test skipped)
	// end without error; by default it is an EmptyRunError (exit 5).
	AllowEmpty bool
	// Platform is the Kubernetes platform (kube backend); on eks NCCL
	// between nodes needs aws-ofi-nccl, which preflight checks.
	Platform string
}

// ParseFunc reads one tool's raw output into a measurement. Parsers are
// pure; the runner hands them the file of the side that holds the result.
type ParseFunc func(tool string, r io.Reader) (parsers.Measurement, error)

// run is the state of one execution of a plan.
type run struct {
	cfg      Config
	ncclJSON ncclJSONCache
	dir      *resultsDir
	runID    string
	// provisioned are the endpoints as the backend made them, in plan
	// order; endpoints the same by name.
	provisioned []endpoint.Endpoint
	endpoints   map[string]endpoint.Endpoint
	tests       map[string]*scenarios.Test
	etcdURL     string
	etcd        *clientv3.Client
	etcdSrv     *runetcd.Server
	progress    *progress

	// preflight is each endpoint's checks, by endpoint name.
	preflight map[string]schema.PreflightEndpoint
	// mtus is each endpoint's active RDMA MTU, read by preflight.
	mtus map[string]int
	// rates is each endpoint's own line rate (lineRate: auto), by name.
	rates map[string]schema.LineRate
	// nvlink is each endpoint's NVLink rate, read once when a collective
	// first runs on it alone (nvlinkRate); nil entries: none there.
	nvlink map[string]*schema.LineRate

	mu      sync.Mutex
	results []schema.Result
	order   map[string]int // job ID → its place in the plan, as rounds start
	// sharedPorts are the endpoints of one machine on one NIC port;
	// portUses each leg's time on them (sharedport.go).
	sharedPorts []schema.SharedPort
	portUses    []*portUse
	versions    map[string]string // tool → version it reported
	mpi         map[*mpi.Session]bool
}

// errStopRounds ends a walk over the plan's rounds early; never returned.
var errStopRounds = errors.New("stop")

func testsByName(sc *scenarios.Scenario) map[string]*scenarios.Test {
	m := map[string]*scenarios.Test{}
	if sc != nil {
		for i := range sc.Tests {
			m[sc.Tests[i].Name] = &sc.Tests[i]
		}
	}
	return m
}

// legRun is one repetition of one leg.
// ncclJSONCache remembers, per endpoint and binary, whether nccl-tests
// knows -J (tools.NCCLJSONScript): asked once per run.
type ncclJSONCache struct {
	mu  sync.Mutex
	has map[string]bool
}

type legRun struct {
	r       *run
	job     *plan.Job
	leg     *plan.Leg
	legIdx  int
	rep     int
	subst   substituter
	sides   []*side
	retries int
	// pendingNotes are remarks made while waiting (a server killed after
	// its client ended), kept for the result's reason.
	pendingNotes []string
	// mpi are the ssh launches up for this repetition (runner/mpi).
	mpi []*mpi.Session
	// mpirun is where each launcher's mpirun is, by endpoint: its
	// absolute path and prefix (mpi.Resolve), so that remote ranks find
	// orted in HPC-X, NGC and UBI layouts.
	mpirun map[string][2]string
}

func (l *legRun) notef(format string, a ...any) {
	l.pendingNotes = append(l.pendingNotes, fmt.Sprintf(format, a...))
}

// toolEndpoint is a provisioned endpoint, where the leg's tool, its
// scratch folders and MPI launcher run (in a pod: its one container).
func (l *legRun) toolEndpoint(name string) (endpoint.Endpoint, bool) {
	ep, ok := l.r.endpoints[name]
	return ep, ok
}

// endpoint is a provisioned endpoint, or the planned one before Provision.
func (r *run) endpoint(name string) endpoint.Endpoint {
	if ep, ok := r.endpoints[name]; ok {
		return ep
	}
	for _, ep := range r.cfg.Plan.Endpoints {
		if ep.Name == name {
			return ep
		}
	}
	return endpoint.Endpoint{Name: name}
}
