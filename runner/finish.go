package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
)

// finish stamps the report, saves it and picks the error (exit code).
func (r *run) finish(ctx context.Context, rep *schema.Report, runErr error) (*schema.Report, error) {
	r.mu.Lock()
	rep.Results = append([]schema.Result(nil), r.results...)
	rep.Run.ToolVersions = r.versions
	r.mu.Unlock()
	order := r.planOrder()
	sort.SliceStable(rep.Results, func(i, j int) bool { return resultLess(order, rep.Results[i], rep.Results[j]) })
	rep.Summary = summarize(rep.Results)
	r.derive(rep)
	rep.Run.End = time.Now().UTC()
	if ctx.Err() != nil {
		rep.Run.Interrupted = true
		if runErr == nil { // why it stopped: a signal, the run's time limit …
			runErr = context.Cause(ctx)
		}
	}
	if runErr != nil {
		rep.Run.Error = runErr.Error()
	}
	// A report that could not be saved is said whatever else went wrong:
	// "partial report written" must not be claimed without it.
	saveErr := r.dir.saveReport(rep)
	if saveErr != nil {
		saveErr = &SaveError{Err: saveErr}
		runErr = errors.Join(runErr, saveErr)
	}
	r.progress.done(rep)
	switch {
	case rep.Run.Interrupted:
		return rep, &InterruptedError{Finished: len(rep.Results), Cause: context.Cause(ctx), SaveErr: saveErr}
	case runErr != nil:
		return rep, &HarnessError{Err: runErr}
	case rep.Summary.Error > 0:
		return rep, &HarnessError{Errors: rep.Summary.Error}
	case rep.Summary.Fail+rep.Summary.Invalid > 0:
		return rep, &ShortfallError{Failed: rep.Summary.Fail + rep.Summary.Invalid}
	case rep.Summary.Pass == 0 && !r.cfg.AllowEmpty:
		return rep, &EmptyRunError{Skipped: rep.Summary.Skipped}
	}
	return rep, nil
}

func (r *run) newReport() *schema.Report {
	p := r.cfg.Plan
	meta := schema.RunMeta{
		ID: r.runID, Scenario: p.Scenario, Start: time.Now().UTC(), Version: r.cfg.Version,
		Backend: r.cfg.Backend.Name(), LineRate: r.cfg.LineRate, Fingerprint: r.cfg.Fingerprint,
	}
	if p.Profile == scenarios.ProfileQuick {
		meta.Profile = scenarios.QuickSummary
	}
	if sc := r.cfg.Scenario; sc != nil {
		meta.ScenarioFile = sc.File
	}
	meta.ScenarioHash = r.cfg.ScenarioHash
	if meta.ScenarioHash == "" && len(r.cfg.ScenarioBytes) > 0 {
		meta.ScenarioHash = sha256Hex(r.cfg.ScenarioBytes)
	}
	return &schema.Report{SchemaVersion: schema.Version, Run: meta}
}

// planOrder numbers jobs in plan order (skipped tests first); only the
// jobs that started have results to order.
func (r *run) planOrder() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	order := make(map[string]int, len(r.order)+len(r.cfg.Plan.Skipped))
	for i, s := range r.cfg.Plan.Skipped {
		order[s.Test] = i
	}
	for id, n := range r.order { // numbered as the rounds started them
		order[id] = n
	}
	return order
}

// resultLess orders results as the plan does: job by job, leg by leg.
func resultLess(order map[string]int, a, b schema.Result) bool {
	if order[a.JobID] != order[b.JobID] {
		return order[a.JobID] < order[b.JobID]
	}
	return a.Leg < b.Leg
}

func summarize(rs []schema.Result) schema.Summary {
	s := schema.Summary{Total: len(rs)}
	for _, r := range rs {
		switch r.Verdict {
		case schema.VerdictPass:
			s.Pass++
		case schema.VerdictFail:
			s.Fail++
		case schema.VerdictError:
			s.Error++
		case schema.VerdictSkipped:
			s.Skipped++
		case schema.VerdictInvalid:
			s.Invalid++
		}
	}
	return s
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
