package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report"
	"github.com/rdmabench/rdmabench/runner/backend"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/mpi"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// ParseFunc reads one tool's raw output into a measurement. Parsers are
// pure; the runner hands them the file of the side that holds the result.
type ParseFunc func(tool string, r io.Reader) (parsers.Measurement, error)

// DefaultParse is the parser used when Config.Parse is nil.
var DefaultParse ParseFunc

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
	LineRate *report.LineRate
	// Fingerprint of the system measured (BackendFingerprint), for
	// RunMeta.Fingerprint; nil = unknown.
	Fingerprint map[string]string
	// Discover, when set, is called once the endpoints exist to fill
	// LineRate and Fingerprint from them: the kube backend can read a NIC
	// only from inside its pod, which does not exist before Provision.
	Discover func(ctx context.Context, eps []backend.Endpoint) (*report.LineRate, map[string]string)
	Parse    ParseFunc
	// Progress receives one line per leg (stderr); nil = silent.
	Progress io.Writer
	// HasRDMA says whether RDMA devices exist where endpoints run; nil
	// uses DetectRDMA (this host), right for the local backend.
	HasRDMA func() (bool, string)
	// EtcdURL is an etcd to use instead of starting the embedded one.
	EtcdURL string
	// ExitGrace is how long servers may outlive their client (default 5s).
	ExitGrace time.Duration
	// CleanupTimeout bounds the clean-up after the run (default 30s).
	CleanupTimeout time.Duration
	// Keep leaves endpoints (pods) for debugging; local processes are
	// always killed since nothing is left to inspect in them.
	Keep bool
	// NoPreflight skips the preflight checks (runner/preflight).
	NoPreflight bool
	// NoPathProof skips reading the RDMA port counters around each leg.
	NoPathProof bool
}

// run is the state of one execution of a plan.
type run struct {
	cfg       Config
	dir       *resultsDir
	runID     string
	endpoints map[string]backend.Endpoint
	tests     map[string]*scenarios.Test
	etcdURL   string
	etcd      *clientv3.Client
	etcdSrv   *runetcd.Server
	progress  *progress

	// preflight is each endpoint's checks, by endpoint name.
	preflight map[string]report.PreflightEndpoint
	// mtus is each endpoint's active RDMA MTU, read by preflight.
	mtus map[string]int

	mu       sync.Mutex
	results  []report.Result
	versions map[string]string // tool → version it reported
	mpi      map[*mpi.Session]bool
}

// Run executes the plan round by round and returns the report, which is
// also saved as report.json — when the run fails or is interrupted too. The
// error implements ExitCode(): 1 shortfall, 3 harness failure, 130 Ctrl-C.
func Run(ctx context.Context, cfg Config) (*report.Report, error) {
	if cfg.Plan == nil || cfg.Backend == nil || cfg.OutDir == "" {
		return nil, &HarnessError{Err: errors.New("runner: Plan, Backend and OutDir are required")}
	}
	r := &run{cfg: cfg, runID: cfg.RunID, tests: testsByName(cfg.Scenario)}
	if r.runID == "" {
		r.runID = NewRunID(time.Now())
	}
	dir, err := createResultsDir(cfg.OutDir)
	if err != nil {
		return nil, &HarnessError{Err: err}
	}
	r.dir = dir
	defer dir.close()
	rep := r.newReport()
	r.progress = newProgress(cfg.Progress, len(cfg.Plan.Rounds))
	runErr := r.prepare(ctx, rep)
	if runErr == nil {
		r.recordSkips()
		r.rounds(ctx)
		r.retestLowPairs(ctx)
	}
	r.cleanup()
	return r.finish(ctx, rep, runErr)
}

// NewRunID is a short, sortable, unique-enough run id: 20060102-150405-xxxx.
func NewRunID(t time.Time) string {
	return fmt.Sprintf("%s-%04x", t.UTC().Format("20060102-150405"), t.UnixNano()&0xffff)
}

func testsByName(sc *scenarios.Scenario) map[string]*scenarios.Test {
	m := map[string]*scenarios.Test{}
	if sc != nil {
		for i := range sc.Tests {
			m[sc.Tests[i].Name] = &sc.Tests[i]
		}
	}
	return m
}

// prepare writes the scenario and plan, provisions endpoints and starts
// etcd when a job needs it.
func (r *run) prepare(ctx context.Context, rep *report.Report) error {
	if len(r.cfg.ScenarioBytes) > 0 {
		if err := r.dir.writeFile(ScenarioFile, r.cfg.ScenarioBytes); err != nil {
			return err
		}
	}
	if err := r.dir.writePlan(r.cfg.Plan); err != nil {
		return err
	}
	eps, err := r.cfg.Backend.Provision(ctx, r.cfg.Plan.Endpoints)
	if err != nil {
		return fmt.Errorf("provision endpoints on %s: %w", r.cfg.Backend.Name(), err)
	}
	if r.cfg.Discover != nil {
		r.cfg.LineRate, r.cfg.Fingerprint = r.cfg.Discover(ctx, eps)
		rep.Run.LineRate, rep.Run.Fingerprint = r.cfg.LineRate, r.cfg.Fingerprint
	}
	r.endpoints = map[string]backend.Endpoint{}
	for _, ep := range eps {
		r.endpoints[ep.Name] = ep
		rep.Endpoints = append(rep.Endpoints, report.EndpointInfo{Name: ep.Name, Pool: ep.Pool, Host: ep.Host, Node: ep.Node, Pod: ep.Pod,
			Device: ep.Device, Address: ep.Address, Network: ep.Network, Interface: ep.Interface})
		if ep.Host != "" && !slices.Contains(rep.Run.Hosts, ep.Host) {
			rep.Run.Hosts = append(rep.Run.Hosts, ep.Host)
		}
	}
	r.runPreflight(ctx, rep, eps)
	if r.cfg.Plan.NeedsEtcd && r.anyJobRuns() {
		return r.startEtcd(ctx)
	}
	return nil
}

// startEtcd starts the embedded etcd (or connects to Config.EtcdURL).
func (r *run) startEtcd(ctx context.Context) error {
	r.etcdURL = r.cfg.EtcdURL
	local := r.etcdURL
	switch h, hosted := r.cfg.Backend.(backend.EtcdHoster); {
	case r.etcdURL != "":
	case hosted:
		// The endpoints cannot reach this host (pods): the backend runs
		// the etcd beside them and gives the runner its own way in.
		tools, runner, err := h.StartEtcd(ctx)
		if err != nil {
			return fmt.Errorf("etcd for nixlbench on %s: %w", r.cfg.Backend.Name(), err)
		}
		r.etcdURL, local = tools, runner
	default:
		srv, err := runetcd.Start(ctx, runetcd.Config{})
		if err != nil {
			return fmt.Errorf("embedded etcd for nixlbench: %w", err)
		}
		r.etcdSrv, r.etcdURL, local = srv, srv.URL, srv.URL
	}
	c, err := runetcd.NewClient(local)
	if err != nil {
		return fmt.Errorf("etcd client for %s: %w", local, err)
	}
	r.etcd = c
	return nil
}

// rounds runs the rounds one after the other, the jobs of a round at once.
func (r *run) rounds(ctx context.Context) {
	for i := range r.cfg.Plan.Rounds {
		if ctx.Err() != nil {
			return
		}
		round := &r.cfg.Plan.Rounds[i]
		r.progress.round(i, round)
		var wg sync.WaitGroup
		for j := range round.Jobs {
			wg.Add(1)
			go func(job *plan.Job) {
				defer wg.Done()
				defer r.recoverJob(job)
				r.runJob(ctx, job)
			}(&round.Jobs[j])
		}
		wg.Wait()
	}
}

// runJob runs the legs of a job in order; each leg's result is recorded
// the moment it ends.
func (r *run) runJob(ctx context.Context, job *plan.Job) {
	if skip, why := r.skipReason(job); skip {
		for i := range job.Legs {
			r.record(r.skippedResult(job, i, why))
		}
		return
	}
	for i := range job.Legs {
		res, ok := r.runLeg(ctx, job, i)
		if !ok {
			return // interrupted: an unfinished leg is not a result
		}
		r.record(res)
	}
}

// recoverJob turns a panic inside a job into an error result, so that a
// harness bug costs one job, not the run and its report.
func (r *run) recoverJob(job *plan.Job) {
	if p := recover(); p != nil {
		res := r.newResult(job, 0)
		res.Verdict, res.ErrorClass = report.VerdictError, parsers.ClassToolError
		res.Reason = fmt.Sprintf("internal error in rdmabench (please report): %v", p)
		res.Started = time.Now().UTC()
		r.record(res)
	}
}

// record appends a result to results.jsonl (fsynced) and to the report.
func (r *run) record(res report.Result) {
	if res.Requires == "" {
		res.Requires = r.requires(res.Test, res.Tool)
	}
	if err := r.dir.appendResult(res); err != nil {
		res.Reason = judge.JoinReason(res.Reason, "not written to "+ResultsFile+": "+err.Error())
	}
	r.mu.Lock()
	r.results = append(r.results, res)
	r.mu.Unlock()
	r.progress.leg(res)
}

// cleanup runs on a fresh context: after Ctrl-C the run's is done.
func (r *run) cleanup() {
	bound := r.cfg.CleanupTimeout
	if bound <= 0 {
		bound = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	r.mpiCleanup(ctx)
	if r.cfg.Keep && r.cfg.Backend.Name() != "local" {
		hint := "remove them with rdmabench clean"
		if k, ok := r.cfg.Backend.(backend.KeepHinter); ok {
			hint = k.KeepHint()
		}
		r.progress.printf("--keep: endpoints left in place for debugging; %s", hint)
	} else if err := r.cfg.Backend.Cleanup(ctx); err != nil {
		r.progress.printf("clean-up: %v", err)
	}
	if r.etcd != nil {
		r.etcd.Close()
	}
	if r.etcdSrv != nil {
		_ = r.etcdSrv.Close()
	}
}

// scratch makes the leg's ${out} folder on its endpoints, when a command
// uses it.
func (r *run) scratch(ctx context.Context, l *legRun) (string, error) {
	if r.cfg.Backend.Name() == "local" {
		abs, err := filepath.Abs(r.dir.scratchDir(l.job.ID, l.legIdx, l.rep))
		if err != nil || !usesOut(l.leg) {
			return abs, err
		}
		return abs, mkdirAll(abs)
	}
	if !usesOut(l.leg) {
		return "", nil
	}
	dir := fmt.Sprintf("/tmp/rdmabench-%s/%s/%d-%d", r.runID, sanitize(l.job.ID), l.legIdx, l.rep)
	seen := map[string]bool{}
	for _, pc := range l.leg.Commands {
		if seen[pc.Endpoint] {
			continue
		}
		seen[pc.Endpoint] = true
		if _, err := r.cfg.Backend.Exec(ctx, r.endpoints[pc.Endpoint], []string{"mkdir", "-p", dir}); err != nil {
			return "", fmt.Errorf("make scratch folder on %s: %w", pc.Endpoint, err)
		}
	}
	return dir, nil
}

func (r *run) exitGrace() time.Duration {
	if r.cfg.ExitGrace > 0 {
		return r.cfg.ExitGrace
	}
	return 5 * time.Second
}

func (r *run) parse(tool string, rd io.Reader) (parsers.Measurement, error) {
	p := r.cfg.Parse
	if p == nil {
		p = DefaultParse
	}
	if p == nil {
		return parsers.Measurement{}, errors.New("no parser linked into this build")
	}
	return p(tool, rd)
}
