package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/rdmabench/rdmabench/units"
)

// WriteCompareTable writes a comparison for a terminal or a CI log: the
// environment warnings, every row that is not unchanged (regressions
// first), the counts and the rule that decided.
func WriteCompareTable(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "baseline %s → current %s, threshold %g%%\n", c.Baseline.ID, c.Current.ID, c.ThresholdPct)
	for _, warn := range c.Warnings {
		fmt.Fprintln(w, "WARNING:", warn)
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	t.Header("STATUS", "TEST", "PAIR", "BACKEND", "SIZE", "BASELINE", "CURRENT", "CHANGE", "P", "NOTE")
	shown := 0
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.Status == StatusUnchanged {
			continue
		}
		shown++
		if err := t.Append(compareRowCells(r)); err != nil {
			return err
		}
	}
	if shown > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%s\nrule: %s\n", countsLine(c.Counts), CompareRule)
	return err
}

func compareRowCells(r *CompareRow) []string {
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
		r.formatEstimate(r.Baseline), r.formatEstimate(r.Current), change, p, oneLine(r.Note, 48)}
}

// formatEstimate renders "392.10 Gb/s ±1.2% (n=3)".
func (r *CompareRow) formatEstimate(e *Estimate) string {
	if e == nil {
		return "-"
	}
	var s string
	if r.Metric == "lat_avg_us" {
		s = FormatMicros(e.Mean)
	} else {
		s = FormatBandwidth(r.Tool, e.Mean)
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
