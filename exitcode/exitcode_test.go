package exitcode

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocTableIsTheTable: the exit-code table of docs/reference/exit-codes.md
// lists exactly Table, row for row, so that a new code cannot go
// undocumented.
func TestDocTableIsTheTable(t *testing.T) {
	data, err := os.ReadFile("../docs/reference/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "| code | meaning |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "| "):
			rows = append(rows, line)
		case in:
			in = false
		}
	}
	var want []string
	for _, m := range Table {
		want = append(want, fmt.Sprintf("| %d | %s |", m.Code, m.Text))
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/reference/exit-codes.md exit-code table:\n%s\nwant (exitcode.Table):\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}
