package text

import (
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/report/schema"
)

// SummaryRowsPerTest bounds the rows one test contributes to the terminal
// summary: a 64-endpoint all-to-all has 4,032 pairs and nobody reads them in
// a terminal. Every non-passing result is always shown; passing ones beyond
// the bound are folded into one line with their range of efficiency.
const SummaryRowsPerTest = 8

// WriteSummaryTable writes the terminal summary of r: one row per result
// (test and pair), worst first, with its best figure, percent of line rate,
// transport and verdict, then one count line. It is what `rdmabench run` and
// `rdmabench report` print.
func WriteSummaryTable(w io.Writer, r *schema.Report) error {
	if err := WritePreflightProblems(w, r.Preflight); err != nil {
		return err
	}
	t := term.NewTable(w, "VERDICT", "TEST", "TOOL", "BACKEND", "PAIR", "BEST", "% LINE", "TRANSPORT", "REASON")
	color := term.Color(w)
	for _, row := range summaryRows(r.Results) {
		row[0] = term.Paint(color, row[0])
		t.Append(row...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	s := schema.CountVerdicts(r.Results)
	noun := "results"
	if s.Total == 1 {
		noun = "result"
	}
	line := fmt.Sprintf("%d %s: %d pass, %d fail, %d error, %d skipped", s.Total, noun, s.Pass, s.Fail, s.Error, s.Skipped)
	line += pathCounts(r.Results, s.Invalid)
	if r.Run.Interrupted {
		// Say it where the numbers are: the run stopped early, more was planned.
		line += " (interrupted"
		if r.Run.Error != "" {
			line += ": " + r.Run.Error
		}
		line += "; only what finished is here)"
	}
	if _, err := fmt.Fprintln(w, line); err != nil {
		return err
	}
	return WriteInsights(w, r)
}

// summaryRows renders results worst first, folding the passing tail of
// large tests into a row each after the passes (passes come last).
func summaryRows(rs []schema.Result) [][]string {
	var rows [][]string
	shown := map[string]int{}
	folded := map[string]*FoldedPasses{}
	var order []string
	for _, i := range schema.WorstFirst(rs) {
		res := &rs[i]
		if res.Verdict == schema.VerdictPass && shown[res.Test] >= SummaryRowsPerTest {
			f := folded[res.Test]
			if f == nil {
				f = &FoldedPasses{Tool: res.Tool}
				folded[res.Test] = f
				order = append(order, res.Test)
			}
			f.Add(res)
			continue
		}
		shown[res.Test]++
		rows = append(rows, resultRow(res))
	}
	for _, test := range order {
		rows = append(rows, folded[test].Row(test))
	}
	return rows
}

func resultRow(r *schema.Result) []string {
	return []string{
		verdictMark(r), r.Test, r.Tool, r.Backend, r.Label(),
		r.Headline(), schema.FormatEfficiency(r.Efficiency), r.TransportLabel(), term.OneLine(r.Reason, 48),
	}
}

// FoldedPasses accumulates the passing results of one test left out of
// the table (the terminal's here, the HTML's verdict table alike).
type FoldedPasses struct {
	Tool     string // the test's tool
	n        int
	min, max *float64
}

// Add counts a passing result, and its efficiency in the range.
func (f *FoldedPasses) Add(r *schema.Result) {
	f.n++
	if r.Efficiency == nil {
		return
	}
	e := *r.Efficiency
	if f.min == nil || e < *f.min {
		f.min = &e
	}
	if f.max == nil || e > *f.max {
		f.max = &e
	}
}

// Row is the one row that stands for them: "… N more pairs", the range of
// their efficiency, "all pass".
func (f *FoldedPasses) Row(test string) []string {
	eff := "-"
	if f.min != nil {
		eff = fmt.Sprintf("%.1f–%.1f%%", *f.min, *f.max)
	}
	return []string{"PASS", test, f.Tool, "", fmt.Sprintf("… %d more pairs", f.n), "", eff, "", "all pass"}
}
