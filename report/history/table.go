package history

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/report/schema"
)

// MaxTableRows bounds the series a terminal table lists (a year of
// a 64-endpoint matrix has 48,384); -o json and the HTML have the rest.
const MaxTableRows = 100

// WriteTable writes a history for a terminal or a CI log: the runs
// it read, the environment changes, then one row per series, stepped-down
// ones first; WriteRule adds the rule.
func WriteTable(w io.Writer, h *History, maxRows int) error {
	if len(h.Runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs found")
		return err
	}
	first, last := h.Runs[0], h.Runs[len(h.Runs)-1]
	fmt.Fprintf(w, "%d runs from %s (%s) to %s (%s), %d series, %d stepped down\n", len(h.Runs),
		first.Start.UTC().Format("2006-01-02"), first.ID, last.Start.UTC().Format("2006-01-02"), last.ID,
		len(h.Series), h.SteppedDown())
	for _, c := range h.Changes {
		fmt.Fprintf(w, "environment changed at %s (%s): %s\n", h.Runs[c.Run].ID, c.Time.UTC().Format("2006-01-02"), strings.Join(c.What, "; "))
	}
	t := term.NewTable(w, "TEST", "PAIR", "BACKEND", "SIZE", "RUNS", "LATEST", "BEST", "MEDIAN", "NOISE", "STEPPED DOWN")
	shown := min(len(h.Series), maxRows)
	for _, s := range h.Series[:shown] {
		t.Append(RowCells(s)...)
	}
	if shown > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	if n := len(h.Series) - shown; n > 0 {
		fmt.Fprintf(w, "… %d more series not shown (-o json has every one)\n", n)
	}
	return nil
}

// WriteRule writes how series are judged (history --explain).
func WriteRule(w io.Writer, h *History) error {
	_, err := fmt.Fprintf(w, "rule: %s\n", h.Rule)
	return err
}

// SteppedDown counts the series with a step.
func (h *History) SteppedDown() int {
	n := 0
	for _, s := range h.Series {
		if s.Step != nil {
			n++
		}
	}
	return n
}

// RowCells are a series' table cells, as WriteTable and the HTML list them.
func RowCells(s *Series) []string {
	test := s.Test
	if s.Op != "" {
		test += " " + s.Op
	}
	pair := s.Pair
	if s.Variant != "" {
		pair += " [" + s.Variant + "]"
	}
	size := "-"
	if s.Bytes > 0 {
		size = schema.FormatSizeShort(s.Bytes)
	}
	noise := "-"
	if s.Median != 0 {
		noise = fmt.Sprintf("±%.1f%%", 100*s.Noise/s.Median)
	}
	step := "-"
	if st := s.Step; st != nil {
		step = fmt.Sprintf("%s (%s) %+.1f%%: %s → %s", st.Time.UTC().Format("2006-01-02"), st.RunID, st.ChangePct, s.Format(st.Before), s.Format(st.After))
	}
	return []string{test, pair, s.Backend, size, fmt.Sprint(len(s.Values)), s.Format(s.Latest), s.Format(s.Best),
		s.Format(s.Median), noise, step}
}
