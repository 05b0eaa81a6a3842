package history

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/exitcode"
	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/schema"
)

// BaselineRule says how an automatic baseline is chosen; compare prints it.
const BaselineRule = "the latest run, started before the current one, of the same scenario (name and " +
	"scenario hash) whose fingerprint and tool versions agree with the current run's on every key " +
	"both know, that passed (no fail, no error, not interrupted, at least one pass)"

// BaselineChoice is the run an automatic baseline picked, and why.
type BaselineChoice struct {
	Path string
	Run  schema.RunMeta
	// Why says in one line why this run was picked.
	Why string
	// Rejected says briefly why the other runs were not, one line per
	// reason with a count and the latest example.
	Rejected []string
}

// NoBaselineError is returned when no run qualifies as a baseline. The
// CLI exits 4, so that a nightly job can tell "nothing to compare with
// yet" (the first night, or the night after an upgrade) from a regression.
type NoBaselineError struct {
	Dirs     []string
	Scenario string
	Rejected []string
	// Rule is the rule no run met (default BaselineRule).
	Rule string
}

// Error names the folders, the scenario and why every run was rejected.
func (e *NoBaselineError) Error() string {
	rule := e.Rule
	if rule == "" {
		rule = BaselineRule
	}
	msg := fmt.Sprintf("no baseline for scenario %q under %s: %s", e.Scenario, strings.Join(e.Dirs, ", "), rule)
	if len(e.Rejected) == 0 {
		return msg + "; no other run found"
	}
	return msg + "; rejected: " + strings.Join(e.Rejected, "; ")
}

// ExitCode is 4: no baseline is neither a regression nor bad input.
func (e *NoBaselineError) ExitCode() int { return exitcode.NoBaseline }

// rejection collects the runs rejected for one reason.
type rejection struct {
	n      int
	latest string // the most recent example, with its detail
}

// baselineScan walks the runs under some folders, latest first, for a
// baseline, and counts the runs it passes over by reason.
type baselineScan struct {
	rejected map[string]*rejection
	order    []string // the reasons, in the order first met
	problems []error  // what FindReports could not read
}

// run hands take, latest first and while more says so, every run under
// dirs that both rules (BaselineRule, SeriesBaselineRule) allow before its
// results are read: not cur (read from curPath) itself, the same scenario
// and scenario file, started before cur, a fingerprint and tool versions
// that agree with cur's on every key both know. Runs are judged from the
// head of their report.json (or history.idx); take reads the survivors and
// rejects those it turns down.
func (s *baselineScan) run(dirs []string, cur *schema.Report, curPath string, more func() bool, take func(ReportFile)) {
	files, problems := FindReports(dirs)
	s.rejected, s.problems = map[string]*rejection{}, problems
	curAbs := absOr(curPath)
	for i := len(files) - 1; i >= 0 && more(); i-- { // latest first
		f, m := files[i], files[i].Run
		switch {
		case absOr(f.Path) == curAbs || m.ID == cur.Run.ID && m.Start.Equal(cur.Run.Start):
			continue // the current run itself
		case m.Scenario != cur.Run.Scenario:
			s.reject("another scenario", fmt.Sprintf("%s: %s", m.ID, m.Scenario))
		case m.ScenarioHash != cur.Run.ScenarioHash:
			s.reject("another version of the scenario file (scenario hash differs)", fmt.Sprintf("%s: %s", m.ID, compare.ShortHash(m.ScenarioHash)))
		case !m.Start.Before(cur.Run.Start):
			s.reject("started after the current run", m.ID)
		default:
			if diff := fingerprintDiff(m, cur.Run); diff != "" {
				s.reject("fingerprint differs", fmt.Sprintf("%s: %s", m.ID, diff))
				continue
			}
			take(f)
		}
	}
}

// reject counts a run passed over for reason; example names it.
func (s *baselineScan) reject(reason, example string) {
	r := s.rejected[reason]
	if r == nil {
		r = &rejection{}
		s.rejected[reason] = r
		s.order = append(s.order, reason)
	}
	r.n++
	if r.latest == "" {
		r.latest = example
	}
}

// lines says why runs were passed over, one line per reason with a count
// and the latest example, then the folders' problems.
func (s *baselineScan) lines() []string {
	var out []string
	for _, reason := range s.order {
		r := s.rejected[reason]
		out = append(out, fmt.Sprintf("%d run(s): %s (latest %s)", r.n, reason, r.latest))
	}
	for _, p := range s.problems {
		out = append(out, p.Error())
	}
	return out
}

// PickBaseline chooses the baseline of cur (read from curPath) among the
// runs under dirs, by BaselineRule: the latest run the scan hands over
// whose verdicts (from history.idx when current, else report.json,
// LoadRunIndex) say it passed.
func PickBaseline(dirs []string, cur *schema.Report, curPath string) (*BaselineChoice, error) {
	var choice *BaselineChoice
	var scan baselineScan
	scan.run(dirs, cur, curPath, func() bool { return choice == nil }, func(f ReportFile) {
		m := f.Run
		r, err := LoadRunIndex(f.Path)
		switch {
		case err != nil:
			scan.reject("unreadable", err.Error())
		case r.Verdict != schema.VerdictPass || r.Summary.Pass == 0:
			s := r.Summary
			scan.reject("did not pass", fmt.Sprintf("%s: %s, %d pass, %d fail, %d error", m.ID, r.Verdict, s.Pass, s.Fail, s.Error))
		default:
			choice = &BaselineChoice{Path: f.Path, Run: m,
				Why: fmt.Sprintf("latest passing run of scenario %s (%s) with a matching fingerprint (%d key(s) and %d tool version(s) agree), started %s, %d pass",
					m.Scenario, compare.ShortHash(m.ScenarioHash), sharedKeys(m.Fingerprint, cur.Run.Fingerprint), sharedKeys(m.ToolVersions, cur.Run.ToolVersions),
					m.Start.UTC().Format("2006-01-02 15:04:05 UTC"), r.Summary.Pass)}
		}
	})
	if choice == nil {
		return nil, &NoBaselineError{Dirs: dirs, Scenario: cur.Run.Scenario, Rejected: scan.lines()}
	}
	choice.Rejected = scan.lines()
	return choice, nil
}

// fingerprintDiff names the first fingerprint key or tool version both runs
// know with different values ("" when they agree).
func fingerprintDiff(a, b schema.RunMeta) string {
	for _, m := range []struct {
		what string
		x, y map[string]string
	}{{"", a.Fingerprint, b.Fingerprint}, {"tool ", a.ToolVersions, b.ToolVersions}} {
		keys := make([]string, 0, len(m.x))
		for k := range m.x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v, ok := m.y[k]; ok && v != m.x[k] {
				return fmt.Sprintf("%s%s %q, current %q", m.what, k, m.x[k], v)
			}
		}
	}
	return ""
}

func sharedKeys(a, b map[string]string) int {
	n := 0
	for k := range a {
		if _, ok := b[k]; ok {
			n++
		}
	}
	return n
}
