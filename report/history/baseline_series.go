package history

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/schema"
)

// SeriesBaselineRule says how `compare --baseline auto` builds its baseline.
const SeriesBaselineRule = "per result (test, pair, backend, operation), the latest run, started before the " +
	"current one, of the same scenario (name and scenario hash) whose fingerprint and tool versions agree " +
	"with the current run's on every key both know, in which that result passed; a run that failed, errored " +
	"or skipped other tests still serves for the results it passed (a result that fell short, errored, was " +
	"invalid or skipped is not a baseline: comparing with it would hide the drop to it)"

// maxBaselineRuns bounds the eligible runs read for a per-series
// baseline: a year of nightlies need not be read to find last night's.
const maxBaselineRuns = 60

// SeriesBaseline is the baseline `compare --baseline auto` compares with:
// a report whose every result comes from the latest eligible run that
// passed it, and which runs served.
type SeriesBaseline struct {
	// Report holds the chosen results; its Run is the latest serving run.
	Report *schema.Report
	// Served is one line per serving run: which, where, how many results.
	Served []string
	// Unserved counts the current results no eligible run passed.
	Unserved int
	// Rejected says why runs were not eligible, one line per reason.
	Rejected []string
}

// PickSeriesBaseline builds the baseline of cur (read from curPath) from
// the runs under dirs, by SeriesBaselineRule: each result from the latest
// run the scan hands over that passed it.
func PickSeriesBaseline(dirs []string, cur *schema.Report, curPath string) (*SeriesBaseline, error) {
	want, keys := compare.IndexResults(cur.Results)
	chosen := map[string]*schema.Result{}
	type served struct {
		meta schema.RunMeta
		path string
		n    int
	}
	var servers []*served
	read := 0
	var scan baselineScan
	more := func() bool { return len(chosen) < len(want) && read < maxBaselineRuns }
	scan.run(dirs, cur, curPath, more, func(f ReportFile) {
		m := f.Run
		r, err := schema.Load(f.Path)
		if err != nil {
			scan.reject("unreadable", err.Error())
			return
		}
		read++
		s := &served{meta: m, path: f.Path}
		have, hkeys := compare.IndexResults(r.Results)
		for _, k := range hkeys {
			res := have[k]
			if _, ok := want[k]; !ok || chosen[k] != nil || res.Verdict != schema.VerdictPass || len(compare.Estimates(res, res.Metric)) == 0 {
				continue
			}
			chosen[k] = res
			s.n++
		}
		if s.n == 0 {
			sm := r.Summary
			scan.reject("passed none of the current run's results", fmt.Sprintf("%s: %s, %d pass, %d fail, %d error", m.ID, RunVerdict(r), sm.Pass, sm.Fail, sm.Error))
			return
		}
		servers = append(servers, s)
	})
	lines := scan.lines()
	if len(servers) == 0 {
		return nil, &NoBaselineError{Dirs: dirs, Scenario: cur.Run.Scenario, Rejected: lines, Rule: SeriesBaselineRule}
	}
	base := &schema.Report{SchemaVersion: cur.SchemaVersion, Run: servers[0].meta}
	for _, k := range keys {
		if r := chosen[k]; r != nil {
			base.Results = append(base.Results, *r)
		}
	}
	base.Summary = schema.CountVerdicts(base.Results)
	out := &SeriesBaseline{Report: base, Unserved: len(want) - len(chosen), Rejected: lines}
	sort.SliceStable(servers, func(i, j int) bool { return servers[i].n > servers[j].n })
	for _, s := range servers {
		out.Served = append(out.Served, fmt.Sprintf("%s (%s): %d of %d result(s), the latest run that passed them, started %s",
			s.meta.ID, s.path, s.n, len(want), s.meta.Start.UTC().Format("2006-01-02 15:04:05 UTC")))
	}
	return out, nil
}

// RunIDs names the runs a per-series baseline drew from, for the
// comparison's heading.
func (b *SeriesBaseline) RunIDs() string {
	ids := make([]string, 0, len(b.Served))
	for _, s := range b.Served {
		ids = append(ids, strings.SplitN(s, " ", 2)[0])
	}
	return strings.Join(ids, "+")
}
