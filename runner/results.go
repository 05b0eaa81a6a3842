package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// Files of a results folder.
const (
	ScenarioFile = "scenario.yaml"
	PlanFile     = "plan.json"
	ResultsFile  = "results.jsonl"
	ReportFile   = "report.json"
	IndexFile    = history.IndexFile
	RawDir       = "raw"
)

// DefaultOutDir is results/<scenario>-<YYYYmmdd-HHMMSS>.
func DefaultOutDir(scenario string, t time.Time) string {
	return filepath.Join("results", sanitize(scenario)+"-"+t.Format("20060102-150405"))
}

// resultsDir writes one run's folder. Appends are serialised and fsynced
// so that a crash loses at most the leg that was running.
type resultsDir struct {
	dir string

	mu    sync.Mutex
	jsonl *os.File
}

// HoldsRun reports whether dir already holds a run's results (the file
// that says so): writing a second run there would mix two runs in one
// results.jsonl and overwrite the first run's raw outputs.
func HoldsRun(dir string) (string, bool) {
	for _, f := range []string{ResultsFile, ReportFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return f, true
		}
	}
	return "", false
}

// UniqueOutDir is dir, or dir-2, dir-3 … the first that does not exist:
// two runs started within one second get folders of their own.
func UniqueOutDir(dir string) string {
	out := dir
	for i := 2; ; i++ {
		if _, err := os.Lstat(out); err != nil {
			return out // absent (or unreadable: creating it says why)
		}
		out = fmt.Sprintf("%s-%d", dir, i)
	}
}

func createResultsDir(dir string) (*resultsDir, error) {
	if f, ok := HoldsRun(dir); ok {
		return nil, fmt.Errorf("results folder %s already holds a run (%s): give another folder (--out) or remove that one", dir, f)
	}
	if err := os.MkdirAll(filepath.Join(dir, RawDir), 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ResultsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	return &resultsDir{dir: dir, jsonl: f}, nil
}

func (d *resultsDir) writeFile(name string, data []byte) error {
	return os.WriteFile(filepath.Join(d.dir, name), data, 0o644)
}

// writePlan streams the plan's rounds into plan.json, one at a time.
func (d *resultsDir) writePlan(p *plan.Plan) error {
	f, err := os.Create(filepath.Join(d.dir, PlanFile))
	if err != nil {
		return err
	}
	if err := plan.WriteJSON(f, p); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// appendResult writes one results.jsonl line and syncs it to disk.
func (d *resultsDir) appendResult(r schema.Result) error {
	r.SchemaVersion = schema.Version
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.jsonl.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("append %s: %w", ResultsFile, err)
	}
	return d.jsonl.Sync()
}

// rawPath is raw/<job>/<leg>-<rep>-<endpoint>-<role>.out, absolute and
// relative to the folder.
func (d *resultsDir) rawPath(job string, leg, rep int, endpoint, role string) (abs, rel string) {
	rel = filepath.Join(RawDir, sanitize(job), fmt.Sprintf("%d-%d-%s-%s.out", leg, rep, sanitize(endpoint), sanitize(role)))
	return filepath.Join(d.dir, rel), rel
}

// keepAttempt renames the raw outputs of an attempt that is run again
// (raw/<job>/<leg>-<rep>-<endpoint>-<role>.attempt-N.out), so that the
// rerun does not overwrite them; it returns the new relative paths.
func (d *resultsDir) keepAttempt(raw []string, attempt int) []string {
	var kept []string
	for _, rel := range raw {
		to := strings.TrimSuffix(rel, ".out") + fmt.Sprintf(".attempt-%d.out", attempt)
		if os.Rename(filepath.Join(d.dir, rel), filepath.Join(d.dir, to)) == nil {
			kept = append(kept, to)
		}
	}
	return kept
}

// scratchDir is the local ${out} of one leg repetition.
func (d *resultsDir) scratchDir(job string, leg, rep int) string {
	return filepath.Join(d.dir, RawDir, sanitize(job), fmt.Sprintf("%d-%d-files", leg, rep))
}

// saveReport writes report.json and, beside it, history.idx (what
// `rdmabench history` reads instead of report.json while it is current).
// The index is best effort: history derives it again when it is missing.
func (d *resultsDir) saveReport(r *schema.Report) error {
	p := filepath.Join(d.dir, ReportFile)
	if err := schema.Save(p, r); err != nil {
		return err
	}
	_ = history.WriteIndex(p, r)
	return nil
}

func (d *resultsDir) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.jsonl.Close()
}

// sanitize keeps a name usable as one path element; a job's "a->b" reads
// "a_to_b".
func sanitize(s string) string {
	s = strings.ReplaceAll(s, "->", "_to_")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), ".")
	if out == "" {
		return "_"
	}
	return out
}
