package term

import (
	"bytes"
	"strings"
	"testing"
)

func TestWidthFromColumns(t *testing.T) {
	var buf bytes.Buffer
	t.Setenv("COLUMNS", "80")
	if got := Width(&buf); got != 80 {
		t.Errorf("COLUMNS=80: %d", got)
	}
	t.Setenv("COLUMNS", "")
	if got := Width(&buf); got != 0 {
		t.Errorf("a buffer, no COLUMNS: %d, want 0 (no bound)", got)
	}
	t.Setenv("COLUMNS", "wide")
	if got := Width(&buf); got != 0 {
		t.Errorf("COLUMNS=wide: %d", got)
	}
}

func TestColorNeedsATTY(t *testing.T) {
	var buf bytes.Buffer
	t.Setenv("NO_COLOR", "")
	if Color(&buf) {
		t.Error("colour into a buffer")
	}
}

// TestTableFitsWidth: the widest column is elided so the table is at most
// COLUMNS wide; every line of it, header and rows alike.
func TestTableFitsWidth(t *testing.T) {
	t.Setenv("COLUMNS", "60")
	var buf bytes.Buffer
	tb := NewTable(&buf, "VERDICT", "TEST", "COMMAND")
	tb.Append("PASS", "write-bw", strings.Repeat("ib_write_bw -d mlx5_0 ", 10))
	tb.Append("FAIL", "rping", "rping -c -a 10.0.0.2")
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := len([]rune(line)); n > 60 {
			t.Errorf("line of %d columns > 60: %q", n, line)
		}
	}
	if !strings.Contains(out, "ib_write_bw -d mlx5_0 ib_write_bw") || !strings.Contains(out, "…") || !strings.Contains(out, "rping -c -a 10.0.0.2") {
		t.Errorf("elided badly:\n%s", out)
	}
	if got := len([]rune(strings.SplitN(out, "\n", 2)[0])); got != 60 {
		t.Errorf("the table is %d wide, want the whole 60", got)
	}

	// No bound: nothing elided.
	t.Setenv("COLUMNS", "")
	buf.Reset()
	tb = NewTable(&buf, "A", "B")
	tb.Append("x", strings.Repeat("y", 300))
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), strings.Repeat("y", 300)) {
		t.Error("elided without a bound")
	}
}

func TestPaint(t *testing.T) {
	if got := Paint(true, "FAIL"); got != "\x1b[31mFAIL\x1b[0m" {
		t.Errorf("FAIL: %q", got)
	}
	if got := Paint(false, "FAIL"); got != "FAIL" {
		t.Errorf("no colour: %q", got)
	}
	if got := Paint(true, "whatever"); got != "whatever" {
		t.Errorf("unknown word: %q", got)
	}
	if got := VisibleWidth("\x1b[31mFAIL\x1b[0m"); got != 4 {
		t.Errorf("VisibleWidth: %d", got)
	}
}

// TestFitSeveralWideColumns: two equally wide columns are both narrowed;
// empty columns go first; a table that cannot fit stays as narrow as it can.
func TestFitSeveralWideColumns(t *testing.T) {
	long := strings.Repeat("x", 50)
	h, rows, cut := Fit(60, []string{"A", "B", "EMPTY"}, [][]string{{long, long, ""}})
	if !cut || len(h) != 2 || tableWidth(widths(h, rows)) != 60 {
		t.Errorf("header %q, rows %q, width %d", h, rows, tableWidth(widths(h, rows)))
	}
	_, rows, _ = Fit(10, []string{"A", "B"}, [][]string{{long, long}})
	if got := tableWidth(widths([]string{"A", "B"}, rows)); got != 31 {
		t.Errorf("at the floor the table is %d wide, want 31 (two columns of 12)", got)
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"short", 10, "short"}, {"first\nsecond", 10, "first"}, {"µµµµµµ", 4, "µµµ…"}, {"", 3, ""}} {
		if got := OneLine(c.in, c.n); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
