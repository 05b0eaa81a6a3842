package compare

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/units"
)

// WriteTable writes a comparison for a terminal or a CI log: the
// environment warnings, every row that is not unchanged (regressions
// first) and the counts; WriteRule adds the rule that decided.
func WriteTable(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "baseline %s → current %s, threshold %g%%\n", c.Baseline.ID, c.Current.ID, c.ThresholdPct)
	for _, warn := range c.Warnings {
		fmt.Fprintln(w, "WARNING:", warn)
	}
	t := term.NewTable(w, "STATUS", "TEST", "PAIR", "BACKEND", "SIZE", "BASELINE", "CURRENT", "CHANGE", "P", "NOTE")
	color := term.Color(w)
	shown := FoldRows(c.Rows, MaxTableRows)
	for _, f := range shown {
		cells := RowCells(f.Row)
		if f.More > 0 {
			cells[9] = term.OneLine(strings.TrimSpace(fmt.Sprintf("%s (+%d more sizes)", cells[9], f.More)), 48)
		}
		cells[0] = term.Paint(color, cells[0])
		t.Append(cells...)
	}
	if len(shown) > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	if n := CountChanged(c.Rows) - shownRows(shown); n > 0 {
		fmt.Fprintf(w, "… %d more changed rows not shown (-o json has every row)\n", n)
	}
	_, err := fmt.Fprintln(w, countsLine(c.Counts))
	return err
}

// WriteRule writes the rule that decided each status (compare
// --explain): a paragraph once read, not after every comparison.
func WriteRule(w io.Writer, c *Comparison) error {
	_, err := fmt.Fprintf(w, "rule: %s\n", c.Rule)
	return err
}

// MaxTableRows bounds the compare table printed to a terminal or CI
// log; -o json and the HTML hold every row.
const MaxTableRows = 200

// FoldedRow is one result's rows of one status, shown by the worst of them.
type FoldedRow struct {
	Row  *Row
	More int
}

// FoldRows keeps, per result and status, its first (worst) row and
// counts the others: a node that slowed down on 126 pairs × 12 sizes reads
// as 126 lines, not 1,512. Unchanged rows are left out; at most max rows.
func FoldRows(rows []Row, max int) []FoldedRow {
	var out []FoldedRow
	at := map[string]int{}
	for i := range rows {
		r := &rows[i]
		if r.Status == StatusUnchanged {
			continue
		}
		k := r.Status + "\x00" + r.Test + "\x00" + r.Pair + "\x00" + r.Backend + "\x00" + r.Op
		if j, ok := at[k]; ok {
			out[j].More++
			continue
		}
		if len(out) >= max {
			continue
		}
		at[k] = len(out)
		out = append(out, FoldedRow{Row: r})
	}
	return out
}

// CountChanged counts the rows that are not unchanged.
func CountChanged(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Status != StatusUnchanged {
			n++
		}
	}
	return n
}

func shownRows(f []FoldedRow) int {
	n := 0
	for _, r := range f {
		n += 1 + r.More
	}
	return n
}

// RowCells are a row's table cells: status, test, pair, backend, size,
// baseline, current, change, p-value and note.
func RowCells(r *Row) []string {
	size, change, p := "-", "-", "-"
	if r.Bytes > 0 {
		size = units.FormatSize(r.Bytes)
	}
	if r.ChangePct != nil {
		change = fmt.Sprintf("%+.1f%%", *r.ChangePct)
	}
	if r.PValue != nil {
		p = fmt.Sprintf("%.3f", *r.PValue)
	}
	return []string{strings.ToUpper(r.Status), r.Test, r.Pair, r.Backend, size,
		r.formatEstimate(r.Baseline), r.formatEstimate(r.Current), change, p, term.OneLine(r.Note, 48)}
}

// formatEstimate renders "392.10 Gb/s ±1.2% (n=3)".
func (r *Row) formatEstimate(e *Estimate) string {
	if e == nil {
		return "-"
	}
	var s string
	if r.Metric == parsers.MetricLatency {
		s = schema.FormatMicros(e.Mean)
	} else {
		s = schema.FormatBandwidth(r.Family, e.Mean)
	}
	if e.N > 1 && e.Mean != 0 {
		s += fmt.Sprintf(" ±%.1f%% (n=%d)", 100*e.Stddev/e.Mean, e.N)
	}
	return s
}

// countsLine renders the status counts in a fixed order: "2 regression, …".
func countsLine(counts map[string]int) string {
	var parts []string
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return statusRank[keys[i]] < statusRank[keys[j]] })
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	if len(parts) == 0 {
		return "nothing to compare"
	}
	return strings.Join(parts, ", ")
}
