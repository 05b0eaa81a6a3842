package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/nic"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/rdmabench/rdmabench/report/push"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/backend/ssh"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// runOptions are the flags and arguments of `rdmabench run`.
type runOptions struct {
	file   string
	outDir string
	runID  string
	output string // table or json
	dryRun bool
	seed   sampleSeed
	keep   bool
	quick  bool
	// allowEmpty accepts a run that measured nothing (exit 0, not 5).
	allowEmpty bool
	timeout    time.Duration
	// preflightTimeout bounds each endpoint's preflight reading.
	preflightTimeout time.Duration
	ports            int    // port offset
	html             string // "auto" (report.html in the results folder), a path, or "none"
	junit            string // JUnit XML file, or ""
	push             string // a Prometheus Pushgateway URL, or ""
	etcd             string // an etcd for nixlbench instead of the run's own
	kube             kubeOptions

	stdout, stderr io.Writer
	// seams: the planner, the summary table and NIC discovery (their own
	// packages; swapped in tests).
	plan    func(sc *scenarios.Scenario, opts plan.CompileOptions) (*plan.Plan, error)
	summary func(io.Writer, *schema.Report) error
	nicRate judge.NICRate
}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{stdout: stdout, stderr: stderr, plan: compilePlan, summary: writeSummary}
	cmd := &cobra.Command{
		Use:               "run SCENARIO",
		ValidArgsFunction: completeScenario,
		Example: `  rdmabench run loopback
  rdmabench run scenarios/pd-disagg.yaml --kubeconfig ~/.kube/config -n rdmabench
  rdmabench run pd-disagg.yaml --out results/nightly-$(date +%F) --junit junit.xml
  rdmabench run wideep.yaml --dry-run`,
		Short: "Run a scenario's tests and write a results folder (report.json, raw outputs)",
		Long: `run loads the scenario (a file, or a shipped scenario's name such as
pd-disagg: scenarios/NAME.yaml here first, then the copy in the binary),
compiles its plan, runs it round by round on the
scenario's backend and writes results/<scenario>-<YYYYmmdd-HHMMSS>/ (or --out):
scenario.yaml, plan.json, raw/ (every tool's output), results.jsonl (one line
per finished leg, written as it ends) and report.json. Progress goes to stderr,
the summary table to stdout. Ctrl-C stops the run, cleans up and still writes
report.json with every finished result (exit 130).

Exit codes: 0 every test passed (skipped tests do not fail a run, as long as
something was measured), 1 some test fell short of its expectation, 2 bad
scenario or flags, 3 a tool or the harness failed (verdict error), 5 nothing
was measured (every test skipped; --allow-empty turns that into 0), 130
interrupted.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.file = args[0]
			return runRun(c.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.outDir, "out", "", "results folder, refused if it holds a run already (default results/<scenario>-<YYYYmmdd-HHMMSS>)")
	fl.StringVar(&o.runID, "run-id", "", "run id used in names and nixlbench groups (default: time-based)")
	fl.StringVarP(&o.output, "output", "o", "table", "stdout at the end: table (summary) or json (report.json)")
	fl.BoolVar(&o.dryRun, "dry-run", false, "print the plan as plan does (-o table: the summary, -o commands: every command line, -o json) and exit without running anything")
	fl.IntVar(&o.ports, "port-offset", 0, "shift every tool port (when the defaults are taken on this host)")
	fl.BoolVar(&o.quick, "quick", false, "the quick profile, for a first look: 1 repetition, at most 2 sizes per list, sweeps from maxSize/16, durations of at most 3s (the report says so)")
	fl.BoolVar(&o.keep, "keep", false, "leave endpoints (pods) for debugging; local processes are always killed")
	fl.BoolVar(&o.allowEmpty, "allow-empty", false, "exit 0 when every test was skipped (default: exit 5, a run that measured nothing does not pass)")
	fl.DurationVar(&o.timeout, "timeout", 0, "bound the whole run; when reached it stops as on Ctrl-C: partial report, exit 130 (0: only each leg's own bound)")
	fl.StringVar(&o.html, "html", "auto", `HTML report: "auto" writes report.html in the results folder, "none" writes none, else a file`)
	fl.StringVar(&o.junit, "junit", "", "also write JUnit XML to this file (for CI)")
	fl.StringVar(&o.push, "push", "", "push the run's figures (the OpenMetrics of report -o openmetrics) to this Prometheus Pushgateway, group job=<scenario>, e.g. http://pushgateway.monitoring.svc:9091")
	fl.StringVar(&o.etcd, "etcd", "", "an etcd URL that the endpoints and this machine both reach, for nixlbench's rendezvous (default: the run's own: embedded for local endpoints, on the first host over ssh, a pod on kube)")
	o.seed.register(fl)
	addPreflightTimeout(fl, &o.preflightTimeout)
	addKubeFlags(fl, &o.kube)
	return cmd
}

func runRun(ctx context.Context, o *runOptions) error {
	if o.output != "table" && o.output != "json" && (o.output != "commands" || !o.dryRun) {
		return usageError{fmt.Errorf("--output %q: want table or json (commands with --dry-run)", o.output)}
	}
	if o.push != "" {
		if err := push.CheckURL(o.push); err != nil {
			return usageError{fmt.Errorf("--push: %w", err)}
		}
	}
	if o.etcd != "" {
		if err := runetcd.CheckClientURL(o.etcd); err != nil {
			return usageError{fmt.Errorf("--etcd: %w", err)}
		}
	}
	sc, err := loadScenario(o.file)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	profile := quickProfile(sc, o.quick)
	if o.runID == "" {
		o.runID = runner.NewRunID(time.Now())
	}
	if o.dryRun && sc.Backend == scenarios.BackendKube {
		// A dry run plans without a cluster: every test is planned, as
		// the pods' devices are known only once they run.
		p, err := o.plan(sc, plan.CompileOptions{HostGPUs: nic.CountGPUs, HasRDMA: func(endpoint.Endpoint) bool { return true }, PortOffset: o.ports,
			Platform: scenarioPlatform(sc), SampleSeed: o.seed.value(), Profile: profile})
		if err != nil {
			return err
		}
		return o.printPlan(p)
	}
	be, err := newBackend(sc, o.runID, o.kube, o.stderr)
	if err != nil {
		return err
	}
	opts := plan.CompileOptions{HostGPUs: nic.CountGPUs, HasRDMA: runner.BackendHasRDMA(ctx, be), PortOffset: o.ports, SampleSeed: o.seed.value(), Profile: profile}
	if opts.Platform, err = backendPlatform(ctx, be); err != nil {
		return err
	}
	p, err := o.plan(sc, opts)
	if err != nil {
		return err
	}
	if o.dryRun {
		return o.printPlan(p)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("--timeout %s reached", o.timeout))
		defer cancel()
	}
	return execute(ctx, o, sc, p, be, opts.Platform)
}

// printPlan is --dry-run's output, plan's for the same -o: table the
// summary, commands every command line, json plan.json.
func (o *runOptions) printPlan(p *plan.Plan) error {
	write, err := planWriter(o.output)
	if err != nil {
		return err
	}
	return write(o.stdout, p)
}

// execute runs the plan and prints where the results are and the summary.
func execute(ctx context.Context, o *runOptions, sc *scenarios.Scenario, p *plan.Plan, be backend.Backend, platform string) error {
	now := time.Now()
	out := o.outDir
	if out == "" {
		out = runner.UniqueOutDir(runner.DefaultOutDir(sc.Metadata.Name, now))
	} else if f, ok := runner.HoldsRun(out); ok {
		return usageError{fmt.Errorf("--out %s already holds a run (%s): give a new folder, or remove that one", out, f)}
	}
	asRun, err := renderScenario(sc)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "rdmabench: running %s (%d round(s), about %s) on %s; results in %s\n", sc.Metadata.Name, p.NumRounds(), plan.Human(p.Totals().Estimate), be.Name(), out)
	rep, runErr := runner.Run(ctx, runner.Config{
		Plan: p, Backend: be, Scenario: sc, ScenarioBytes: asRun, ScenarioHash: fileHash(sc), OutDir: out, RunID: o.runID,
		Version: version, Progress: o.stderr, Keep: o.keep, AllowEmpty: o.allowEmpty, CleanupTimeout: cleanupBound(be), Platform: platform, EtcdURL: o.etcd,
		PreflightTimeout: o.preflightTimeout,
		// Line rate and fingerprint are read once the endpoints exist:
		// pods have no NIC to read before Provision.
		Discover: func(ctx context.Context, eps []endpoint.Endpoint) (*schema.LineRate, map[string]string) {
			return judge.ResolveLineRate(sc, o.lineRate(ctx, be, eps)), runner.BackendFingerprint(ctx, be, eps)
		},
	})
	if rep == nil {
		return runErr
	}
	// A run that failed before any result (provisioning, etcd) has no table
	// to show: its error says it all. report.json is written regardless.
	if len(rep.Results) > 0 || runErr == nil || o.output == "json" {
		if err := printOutcome(o, rep); err != nil && runErr == nil {
			runErr = err
		}
	}
	reportJSON := filepath.Join(out, runner.ReportFile)
	var notSaved *runner.SaveError
	if !errors.As(runErr, &notSaved) { // else the run's error says why it is not there
		fmt.Fprintf(o.stderr, "rdmabench: report: %s\n", reportJSON)
	}
	html := o.html
	if html == "none" {
		html = ""
	}
	// The measurements are safe in report.json already: a rendering that
	// fails (a build without ECharts, an unwritable path) is reported and
	// turns a clean run into a harness error, but loses nothing.
	if err := writeRenderings(rep, reportJSON, html, o.junit, o.stderr); err != nil {
		fmt.Fprintf(o.stderr, "rdmabench: %v (re-render later with rdmabench report %s)\n", err, reportJSON)
		if runErr == nil {
			runErr = err
		}
	}
	if o.push != "" {
		if err := pushMetrics(ctx, o.push, rep, o.stderr); err != nil {
			fmt.Fprintf(o.stderr, "rdmabench: %v (push again later with rdmabench report %s --push %s)\n", err, reportJSON, o.push)
			if runErr == nil {
				runErr = err
			}
		}
	}
	return quiet(runErr)
}

func printOutcome(o *runOptions, rep *schema.Report) error {
	if o.output == "json" {
		return writeJSON(o.stdout, rep)
	}
	return o.summary(o.stdout, rep)
}

// renderScenario is the scenario as run: defaults applied, values as written.
func renderScenario(sc *scenarios.Scenario) ([]byte, error) {
	body, err := yaml.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("render scenario: %w", err)
	}
	head := fmt.Sprintf("# The scenario as run (defaults applied), from %s\n", sc.File)
	return append([]byte(head), body...), nil
}

// fileHash is the sha256 of the scenario file as the user wrote it.
func fileHash(sc *scenarios.Scenario) string {
	data, err := scenarioData(sc)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func newBackend(sc *scenarios.Scenario, runID string, ko kubeOptions, progress io.Writer) (backend.Backend, error) {
	switch sc.Backend {
	case "", scenarios.BackendLocal:
		return local.New(), nil
	case scenarios.BackendSSH:
		return ssh.New(sc.Hosts, ssh.Options{})
	case scenarios.BackendKube:
		return newKubeBackend(sc, runID, ko, progress)
	}
	return nil, fmt.Errorf("backend %q is not available in this build of rdmabench run (local, ssh and kube are)", sc.Backend)
}

// lineRate is how `lineRate: auto` is read: the test's seam, else the
// backend's NIC discovery.
func (o *runOptions) lineRate(ctx context.Context, be backend.Backend, eps []endpoint.Endpoint) judge.NICRate {
	if o.nicRate != nil {
		return o.nicRate
	}
	return runner.BackendNICRate(ctx, be, eps)
}

// silentError marks an error already reported (the run's progress said
// what failed); main prints nothing more but keeps its exit code.
type silentError struct{ error }

// Silent tells main not to print the error again.
func (s silentError) Silent() bool { return true }

// Unwrap returns the run's error.
func (s silentError) Unwrap() error { return s.error }

// ExitCode keeps the wrapped error's code.
func (s silentError) ExitCode() int { return exitCodeFor(s.error) }

// quiet wraps the run's outcome errors (shortfall, errors, interrupt),
// whose details are in the progress lines and report.json already.
func quiet(err error) error {
	if err == nil {
		return nil
	}
	var sf *runner.ShortfallError
	var in *runner.InterruptedError
	var he *runner.HarnessError
	if errors.As(err, &in) && in.SaveErr != nil {
		return err // the report is not there: said, with why
	}
	if errors.As(err, &sf) || errors.As(err, &in) || (errors.As(err, &he) && he.Err == nil) {
		return silentError{err}
	}
	return err
}

// cleanupBound is how long the clean-up may take: the backend's bound
// where it is slow (backend.CleanupBounder: pods), else the runner's
// default (processes are quick).
func cleanupBound(be backend.Backend) time.Duration {
	if c, ok := be.(backend.CleanupBounder); ok {
		return c.CleanupBound()
	}
	return 0
}
