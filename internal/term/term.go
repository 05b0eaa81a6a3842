// Package term adapts what rdmabench prints to where it goes: tables as
// wide as the terminal (COLUMNS, else the TTY's width; no bound into a
// file or a pipe) and colour on a TTY unless NO_COLOR is set.
package term

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
	"golang.org/x/term"
)

// Width is the number of columns output to w may use: COLUMNS when it is a
// positive number, else the terminal's width when w is one, else 0 (no
// bound: a file, a pipe, a CI log keep every character).
func Width(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// Color reports whether output to w may be coloured: a terminal, NO_COLOR
// unset (https://no-color.org) and TERM not dumb.
func Color(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// colours of the verdict and status words.
var colours = map[string]string{
	"PASS": "32", "FAIL": "31", "ERROR": "1;31", "SKIPPED": "33", "INVALID": "35",
	"REGRESSION": "31", "BROKEN": "1;31", "IMPROVEMENT": "32", "NOISE": "33", "MISSING": "33", "NEW": "36",
	"UNCHANGED": "2", "ok": "32",
}

// Paint colours a verdict or status word when on is true; other text is
// returned as it is.
func Paint(on bool, word string) string {
	c, ok := colours[word]
	if !on || !ok {
		return word
	}
	return "\x1b[" + c + "m" + word + "\x1b[0m"
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// VisibleWidth is the number of columns s takes on a terminal.
func VisibleWidth(s string) int {
	return runewidth.StringWidth(ansi.ReplaceAllString(s, ""))
}

// Elide shortens s to at most n columns, ending in "…" when cut.
func Elide(s string, n int) string {
	if VisibleWidth(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return runewidth.Truncate(s, n, "…")
}

// OneLine keeps the first line of s, cut to n runes ("…" ends a cut line):
// a reason, a note or an error as one cell of a table or one label.
func OneLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Fit makes a table with one space of padding either side of each cell
// and a border between them fit in width columns (0: no bound). Columns
// empty in every row are dropped first; then the widest column is elided,
// again and again, down to its header or 12 columns, whichever is wider: a
// table that cannot fit then stays wider. It returns the header and rows to
// print (the inputs are not changed) and whether anything was cut.
func Fit(width int, header []string, rows [][]string) ([]string, [][]string, bool) {
	if width <= 0 || len(header) == 0 || tableWidth(widths(header, rows)) <= width {
		return header, rows, false
	}
	header, rows = dropEmpty(header, rows)
	cols := widths(header, rows)
	floor := make([]int, len(cols))
	for i, h := range header {
		floor[i] = min(cols[i], max(VisibleWidth(h), 12))
	}
	for excess := tableWidth(cols) - width; excess > 0; excess = tableWidth(cols) - width {
		widest, second := -1, 0
		for i, c := range cols {
			if c > floor[i] && (widest < 0 || c > cols[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		for i, c := range cols {
			if i != widest {
				second = max(second, c)
			}
		}
		cols[widest] = max(floor[widest], second, cols[widest]-excess)
		if cols[widest] == second && second > floor[widest] && cols[widest]-excess < second {
			cols[widest] = max(floor[widest], second-1)
		}
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append([]string(nil), r...)
		for c := range out[i] {
			if c < len(cols) {
				out[i][c] = Elide(out[i][c], cols[c])
			}
		}
	}
	return header, out, true
}

func widths(header []string, rows [][]string) []int {
	cols := make([]int, len(header))
	for i, h := range header {
		cols[i] = VisibleWidth(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(cols) {
				cols[i] = max(cols[i], maxLineWidth(c))
			}
		}
	}
	return cols
}

func tableWidth(cols []int) int {
	total := 1
	for _, c := range cols {
		total += c + 3
	}
	return total
}

// dropEmpty removes the columns no row has a value in.
func dropEmpty(header []string, rows [][]string) ([]string, [][]string) {
	keep := make([]bool, len(header))
	for _, r := range rows {
		for i, c := range r {
			if i < len(keep) && c != "" {
				keep[i] = true
			}
		}
	}
	pick := func(r []string) []string {
		var out []string
		for i, c := range r {
			if i >= len(keep) || keep[i] {
				out = append(out, c)
			}
		}
		return out
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = pick(r)
	}
	return pick(header), out
}

func maxLineWidth(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, VisibleWidth(line))
	}
	return n
}
