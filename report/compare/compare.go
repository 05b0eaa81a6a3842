package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rdmabench/rdmabench/exitcode"
	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// Comparison statuses of one (result, size) between two runs.
const (
	StatusRegression  = "regression"  // worse beyond the threshold and beyond the noise
	StatusNoise       = "noise"       // worse beyond the threshold, but within the noise
	StatusImprovement = "improvement" // better beyond the threshold and beyond the noise
	StatusUnchanged   = "unchanged"   // within the threshold
	StatusMissing     = "missing"     // in the baseline, not in the current run (fails CI where the baseline measured it)
	StatusNew         = "new"         // in the current run, not in the baseline
	StatusBroken      = "broken"      // measured in the baseline, error or no figure now
)

// Options tunes Compare.
type Options struct {
	// ThresholdPct is the smallest change, in percent of the baseline, that
	// counts: 5 means a drop of more than 5%.
	ThresholdPct float64
	// Alpha is the significance level of the one-sided Welch t-test used
	// when both runs have repetitions (default 0.05).
	Alpha float64
}

// Rule documents the regression rule; report.json and the HTML
// carry it, and `compare --explain` prints it after the table.
const Rule = "regression = worse than the baseline by more than the threshold AND, " +
	"when both runs have >= 2 repetitions at that size, significant by a one-sided Welch t-test " +
	"(p < alpha); with 1 repetition on a side the noise is unknown and a drop counts only beyond " +
	"max(3 x threshold, 25%); bandwidth worse = lower, latency worse = higher; a result that measured in the " +
	"baseline and errors now is a regression (broken), and so is one that measured in the baseline " +
	"and is missing now"

// SingleRunThresholdPct is the drop that counts when a side has one
// repetition, so that its noise is unknown: three times the threshold, and
// at least 25% (a loaded host was seen to move one iperf3 figure by 78%;
// repetitions: 3 or more give the t-test instead).
func SingleRunThresholdPct(thresholdPct float64) float64 {
	return max(3*thresholdPct, 25)
}

// Comparison is the outcome of comparing a current run with a baseline.
type Comparison struct {
	Baseline     RunRef         `json:"baseline"`
	Current      RunRef         `json:"current"`
	ThresholdPct float64        `json:"thresholdPct"`
	Alpha        float64        `json:"alpha"`
	Rule         string         `json:"rule"`
	Warnings     []string       `json:"warnings,omitempty"`
	Rows         []Row          `json:"rows"`
	Counts       map[string]int `json:"counts"`
}

// RunRef names a compared run.
type RunRef struct {
	ID      string `json:"id"`
	Path    string `json:"path,omitempty"`
	Version string `json:"rdmabenchVersion,omitempty"`
}

// Row is one result at one size in both runs.
type Row struct {
	Test    string         `json:"test"`
	Pair    string         `json:"pair"`
	Tool    string         `json:"tool"`
	Family  parsers.Family `json:"family,omitempty"`
	Backend string         `json:"backend,omitempty"`
	Op      string         `json:"op,omitempty"`
	Variant string         `json:"variant,omitempty"`
	Bytes   int64          `json:"bytes"`
	// Metric is the figure compared: bw_avg_bps, busbw_bps or lat_avg_us.
	Metric   parsers.Metric `json:"metric"`
	Baseline *Estimate      `json:"baseline,omitempty"`
	Current  *Estimate      `json:"current,omitempty"`
	// ChangePct is (current − baseline) / baseline × 100.
	ChangePct *float64 `json:"changePct,omitempty"`
	// PValue of the one-sided Welch t-test, when both sides repeated.
	PValue *float64 `json:"pValue,omitempty"`
	Status string   `json:"status"`
	Note   string   `json:"note,omitempty"`
	// Lost marks a missing row that the baseline measured: the current run
	// has no figure where the last good run had one (an interrupted run, a
	// pair that no longer ran), so it fails CI like a regression.
	Lost bool `json:"lost,omitempty"`
}

// Fails says whether a row fails a CI job: a regression, a broken result,
// or a measured result missing now.
func (r *Row) Fails() bool {
	return r.Status == StatusRegression || r.Status == StatusBroken || r.Status == StatusMissing && r.Lost
}

// Estimate is a metric's mean over N repetitions and their spread.
type Estimate struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev,omitempty"`
	N      int     `json:"n"`
}

// Regressions counts rows that fail a CI job (Row.Fails).
func (c *Comparison) Regressions() int {
	n := 0
	for i := range c.Rows {
		if c.Rows[i].Fails() {
			n++
		}
	}
	return n
}

// Lost counts the missing rows among Regressions.
func (c *Comparison) Lost() int {
	n := 0
	for i := range c.Rows {
		if c.Rows[i].Status == StatusMissing && c.Rows[i].Lost {
			n++
		}
	}
	return n
}

// RegressionError is returned when a comparison found regressions; the CLI
// maps it to exit code 1.
type RegressionError struct {
	N int
	// Missing is how many of the N are measured results missing now.
	Missing int
}

// Error says how many rows regressed; the table above it says which.
func (e *RegressionError) Error() string {
	if e.Missing > 0 && e.N > e.Missing {
		return fmt.Sprintf("%d regression(s) and %d result(s) measured in the baseline missing now", e.N-e.Missing, e.Missing)
	}
	if e.Missing > 0 {
		return fmt.Sprintf("%d result(s) measured in the baseline missing now", e.Missing)
	}
	return fmt.Sprintf("%d regression(s) against the baseline", e.N)
}

// ExitCode is 1: a regression is a shortfall, not a harness failure.
func (e *RegressionError) ExitCode() int { return exitcode.Shortfall }

// Compare matches the results of cur with those of base by test, pair,
// backend, operation and message size, and classifies each change (see
// Rule). It also warns when the two environments differ.
func Compare(base, cur *schema.Report, opt Options) *Comparison {
	if opt.Alpha == 0 {
		opt.Alpha = 0.05
	}
	c := &Comparison{
		Baseline:     RunRef{ID: base.Run.ID, Version: base.Run.Version},
		Current:      RunRef{ID: cur.Run.ID, Version: cur.Run.Version},
		ThresholdPct: opt.ThresholdPct, Alpha: opt.Alpha, Rule: Rule,
		Warnings: append(runWarnings(cur), EnvironmentWarnings(base, cur)...), Counts: map[string]int{},
	}
	if base.Run.ID != "" && base.Run.ID == cur.Run.ID && base.Run.Start.Equal(cur.Run.Start) {
		c.Warnings = append([]string{fmt.Sprintf("baseline and current are the same run (%s, started %s): nothing can have changed; "+
			"compare with an earlier run, or use --baseline auto", cur.Run.ID, cur.Run.Start.UTC().Format("2006-01-02 15:04:05 UTC"))}, c.Warnings...)
	}
	bm, bkeys := IndexResults(base.Results)
	cm, ckeys := IndexResults(cur.Results)
	for _, k := range bkeys {
		b := bm[k]
		if cr, ok := cm[k]; ok {
			c.Rows = append(c.Rows, compareResult(b, cr, opt)...)
		} else {
			row := wholeRow(b, StatusMissing, "not in the current run")
			if row.Lost = len(Estimates(b, b.Metric)) > 0; row.Lost {
				row.Note = "measured in the baseline, not in the current run"
			}
			c.Rows = append(c.Rows, row)
		}
	}
	for _, k := range ckeys {
		// Skipped now and not in the baseline (an automatic baseline holds
		// only results that passed): measured in neither run, no row.
		if _, ok := bm[k]; !ok && cm[k].Verdict != schema.VerdictSkipped {
			c.Rows = append(c.Rows, wholeRow(cm[k], StatusNew, "not in the baseline"))
		}
	}
	for _, r := range c.Rows {
		c.Counts[r.Status]++
	}
	sortRows(c.Rows)
	return c
}

// ResultKey identifies a result across runs. Legs repeating the same key
// (the same pair measured twice) are told apart by their order.
func ResultKey(r *schema.Result) string {
	k := strings.Join([]string{r.Test, r.Pair(), r.Backend, r.Op, r.Variant}, "\x00")
	if r.Retest > 0 { // a low pair's rerun is compared with the same rerun
		k += fmt.Sprintf("\x00retest-%d", r.Retest)
	}
	return k
}

// IndexResults maps each result to its ResultKey (the second and later
// result with a key get "#2", "#3" … appended), and lists the keys in the
// results' order.
func IndexResults(rs []schema.Result) (map[string]*schema.Result, []string) {
	m := map[string]*schema.Result{}
	var keys []string
	for i := range rs {
		k := ResultKey(&rs[i])
		for n := 2; m[k] != nil; n++ {
			k = fmt.Sprintf("%s\x00#%d", ResultKey(&rs[i]), n)
		}
		m[k] = &rs[i]
		keys = append(keys, k)
	}
	return m, keys
}

func wholeRow(r *schema.Result, status, note string) Row {
	return Row{Test: r.Test, Pair: r.Label(), Tool: r.Tool, Family: r.Family, Backend: r.Backend, Op: r.Op, Variant: r.Variant,
		Metric: r.Metric, Status: status, Note: note}
}

// compareResult compares one matched result size by size.
func compareResult(b, c *schema.Result, opt Options) []Row {
	metric := b.Metric
	be, ce := Estimates(b, metric), Estimates(c, metric)
	if c.Verdict == schema.VerdictInvalid { // measured over the wrong path: not comparable
		return []Row{wholeRow(c, StatusBroken, "invalid: "+term.OneLine(c.Reason, 80))}
	}
	if b.Verdict == schema.VerdictInvalid {
		be = nil
	}
	if rows := compareEP(b, c, opt); rows != nil {
		return rows
	}
	if len(be) == 0 {
		if len(ce) == 0 {
			return nil // measured in neither run: nothing to compare
		}
		note := "measured now, not in the baseline"
		if b.Verdict == schema.VerdictError || b.Verdict == schema.VerdictSkipped || b.Verdict == schema.VerdictInvalid {
			note = "measured now; the baseline had " + b.Verdict + ": " + term.OneLine(b.Reason, 60)
		}
		return []Row{wholeRow(c, StatusNew, note)}
	}
	if len(ce) == 0 {
		note := "no measurement now"
		if c.Verdict == schema.VerdictError || c.Verdict == schema.VerdictSkipped || c.Verdict == schema.VerdictInvalid {
			note = c.Verdict + ": " + term.OneLine(c.Reason, 80)
		}
		return []Row{wholeRow(c, StatusBroken, note)}
	}
	var rows []Row
	for _, sz := range sortedSizes(be, ce) {
		row := wholeRow(c, "", "")
		row.Metric, row.Bytes = metric, sz
		row.Baseline, row.Current = be[sz], ce[sz]
		switch {
		case row.Current == nil:
			row.Status, row.Note, row.Lost = StatusMissing, "size not measured now", true
		case row.Baseline == nil:
			row.Status, row.Note = StatusNew, "size not in the baseline"
		default:
			classify(&row, opt, metric == parsers.MetricLatency)
		}
		rows = append(rows, row)
	}
	return rows
}

// classify applies Rule to one row with both estimates.
func classify(row *Row, opt Options, lowerIsBetter bool) {
	b, c := row.Baseline, row.Current
	if b.Mean == 0 {
		row.Status, row.Note = StatusUnchanged, "baseline is zero"
		return
	}
	change := 100 * (c.Mean - b.Mean) / b.Mean
	row.ChangePct = &change
	worse := -change // percent worse
	if lowerIsBetter {
		worse = change
	}
	if math.Abs(change) <= opt.ThresholdPct {
		row.Status = StatusUnchanged
		return
	}
	significant := true
	if b.N >= 2 && c.N >= 2 {
		p := welchOneSided(b, c, worse > 0 != lowerIsBetter)
		row.PValue = &p
		significant = p < opt.Alpha
	} else if wide := SingleRunThresholdPct(opt.ThresholdPct); worse > 0 {
		// One repetition on a side: its noise is unknown, and a busy
		// host moves one figure by tens of percent.
		if worse <= wide {
			row.Status, row.Note = StatusNoise, fmt.Sprintf("noise unknown (1 rep.): counts beyond %g%%", wide)
			return
		}
		row.Status, row.Note = StatusRegression, fmt.Sprintf("1 rep.: counts beyond %g%%", wide)
		return
	}
	switch {
	case worse > 0 && significant:
		row.Status = StatusRegression
	case worse > 0:
		row.Status, row.Note = StatusNoise, fmt.Sprintf("within the noise (p=%.2f)", *row.PValue)
	case significant:
		row.Status = StatusImprovement
	default:
		row.Status, row.Note = StatusUnchanged, fmt.Sprintf("gain within the noise (p=%.2f)", *row.PValue)
	}
}

// welchOneSided returns the p-value of Welch's t-test that the current mean
// is below the baseline mean (baselineHigher) or above it.
func welchOneSided(b, c *Estimate, baselineHigher bool) float64 {
	vb, vc := b.Stddev*b.Stddev/float64(b.N), c.Stddev*c.Stddev/float64(c.N)
	diff := b.Mean - c.Mean
	if !baselineHigher {
		diff = -diff
	}
	if vb+vc == 0 {
		if diff > 0 {
			return 0
		}
		return 1
	}
	t := diff / math.Sqrt(vb+vc)
	df := (vb + vc) * (vb + vc) / (vb*vb/float64(b.N-1) + vc*vc/float64(c.N-1))
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

func sortedSizes(a, b map[int64]*Estimate) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, m := range []map[int64]*Estimate{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// statusRank orders rows for people: what fails CI first; within a status
// the largest change comes first.
var statusRank = map[string]int{StatusBroken: 0, StatusRegression: 1, StatusMissing: 2, StatusNoise: 3,
	StatusNew: 4, StatusImprovement: 5, StatusUnchanged: 6}

// StatusRank is a status's place in that order (0: what fails CI first).
func StatusRank(status string) int { return statusRank[status] }

func sortRows(rows []Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if statusRank[a.Status] != statusRank[b.Status] {
			return statusRank[a.Status] < statusRank[b.Status]
		}
		if a.ChangePct != nil && b.ChangePct != nil && *a.ChangePct != *b.ChangePct {
			if a.Status == StatusImprovement {
				return *a.ChangePct > *b.ChangePct // largest gain first
			}
			return *a.ChangePct < *b.ChangePct // largest drop first
		}
		return false
	})
}
