package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// Run executes the plan round by round and returns the report, which is
// also saved as report.json — when the run fails or is interrupted too. The
// error implements ExitCode(): 1 shortfall, 3 harness failure, 130 Ctrl-C.
func Run(ctx context.Context, cfg Config) (*schema.Report, error) {
	if cfg.Plan == nil || cfg.Backend == nil || cfg.OutDir == "" {
		return nil, &HarnessError{Err: errors.New("runner: Plan, Backend and OutDir are required")}
	}
	r := &run{cfg: cfg, runID: cfg.RunID, tests: testsByName(cfg.Scenario), order: map[string]int{}}
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
	r.progress = newProgress(cfg.Progress, cfg.Plan.NumRounds())
	r.progress.estimate(cfg.Plan.Stats())
	// The stages, each in a file of its own (TestExecutorFilesCallOneWay).
	runErr := r.provision(ctx, rep) // provision.go: endpoints, discovery
	if runErr == nil {
		r.runPreflight(ctx, rep) // provision.go: what each endpoint can run (runner/preflight)
		if r.cfg.Plan.NeedsEtcd && r.anyJobRuns() {
			runErr = r.startEtcd(ctx) // provision.go: nixlbench's rendezvous
		}
	}
	if runErr == nil {
		r.recordSkips()        // skips.go: what will not run, and why
		runErr = r.rounds(ctx) // rounds.go → repetitions.go → repetition.go
		r.retestLowPairs(ctx)  // retest.go: low pairs again, after the matrix
	}
	r.cleanup()                       // provision.go: undone on a fresh context
	return r.finish(ctx, rep, runErr) // finish.go: report.json, exit error
}

// NewRunID is a short, sortable, unique-enough run id: 20060102-150405-xxxx.
func NewRunID(t time.Time) string {
	return fmt.Sprintf("%s-%04x", t.UTC().Format("20060102-150405"), t.UnixNano()&0xffff)
}
