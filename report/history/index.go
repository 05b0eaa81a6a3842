package history

import (
	"slices"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/schema"
)

// A history needs a few hundred kilobytes of each run's report.json (the
// figure per result and size, the run's metadata and verdict) but reading
// them means decoding all of it: 11 MB for a 64-endpoint all-to-all. So a
// run folder also holds history.idx, the RunIndex of its report, written by
// `rdmabench run` beside report.json and by `history` when it had to read
// report.json itself. Both the index and the history read from report.json
// come from IndexOf, so the two cannot disagree.

// RunIndex is what a history (and the automatic baseline) needs of one
// run: its metadata, verdict and, per result, the figure at each size.
type RunIndex struct {
	Run     schema.RunMeta
	Summary schema.Summary
	// Verdict is RunVerdict of the report.
	Verdict string
	Results []IndexedResult
}

// IndexedResult is one result's series keys and figures: compare's key
// (test, pair, backend, op, variant and, for the second and later result
// with that key, Repeat), the metric and the figure (estimates' mean) per
// size, in ascending size.
type IndexedResult struct {
	Test, Tool, Pair, Backend, Op, Variant string
	Family                                 parsers.Family
	// Repeat is 0 for the first result with its key, n for the nth (n ≥ 2).
	Repeat int
	// Metric is the result's.
	Metric parsers.Metric
	// LineRateBps is the result's line rate, else the run's; Expect the
	// level its expectation sets in the metric's unit (0: none).
	LineRateBps, Expect float64
	Sizes               []int64
	Values              []float64
}

// IndexOf derives a run's index from its report: the only place the
// figures of a history are taken from a report.
func IndexOf(r *schema.Report) *RunIndex {
	idx := &RunIndex{Run: r.Run, Summary: r.Summary, Verdict: RunVerdict(r)}
	seen := make(map[string]int, len(r.Results))
	for i := range r.Results {
		res := &r.Results[i]
		if res.Retest > 0 {
			continue // a low pair's rerun, only on nights it was low: not a series of its own
		}
		k := compare.ResultKey(res)
		seen[k]++
		metric := res.Metric
		est := compare.Estimates(res, metric)
		if len(est) == 0 || res.Verdict == schema.VerdictInvalid {
			continue // nothing measured, or over the wrong path: the run's verdicts tell why
		}
		lr := res.LineRateBps(&r.Run)
		exp, _ := expectationLevel(res.Expectation, metric, lr)
		ir := IndexedResult{Test: res.Test, Tool: res.Tool, Family: res.Family, Pair: res.Pair(), Backend: res.Backend, Op: res.Op,
			Variant: res.Variant, Metric: metric, LineRateBps: lr, Expect: exp,
			Sizes: make([]int64, 0, len(est)), Values: make([]float64, len(est))}
		if n := seen[k]; n > 1 {
			ir.Repeat = n
		}
		for sz := range est {
			ir.Sizes = append(ir.Sizes, sz)
		}
		slices.Sort(ir.Sizes)
		for j, sz := range ir.Sizes {
			ir.Values[j] = est[sz].Mean
		}
		idx.Results = append(idx.Results, ir)
	}
	return idx
}

// seriesKey is compare's result key (compare.IndexResults) within a scenario, as a
// comparable struct: no string is built to look a result up.
type seriesKey struct {
	scenario, test, pair, backend, op, variant string
	repeat                                     int
}

func keyOf(scenario string, ir *IndexedResult) seriesKey {
	return seriesKey{scenario, ir.Test, ir.Pair, ir.Backend, ir.Op, ir.Variant, ir.Repeat}
}
