package term

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Table collects rows and renders them with tablewriter (left-aligned, no
// wrapping, headers as written) fitted to w's width (Fit).
type Table struct {
	w      io.Writer
	header []string
	rows   [][]string
	// Cut is set by Render when a column had to be elided to fit.
	Cut bool
}

// NewTable starts a table with its header.
func NewTable(w io.Writer, header ...string) *Table {
	return &Table{w: w, header: header}
}

// Append adds a row.
func (t *Table) Append(cells ...string) { t.rows = append(t.rows, cells) }

// Len is the number of rows appended.
func (t *Table) Len() int { return len(t.rows) }

// Render writes the table.
func (t *Table) Render() error {
	header, rows, cut := Fit(Width(t.w), t.header, t.rows)
	t.Cut = cut
	tbl := tablewriter.NewTable(t.w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	tbl.Header(h...)
	for _, r := range rows {
		if err := tbl.Append(r); err != nil {
			return err
		}
	}
	return tbl.Render()
}
