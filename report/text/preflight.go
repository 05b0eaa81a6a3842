package text

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/report/schema"
)

// verdictMark is the verdict as the terminal shows it; "✓" marks a
// result whose RDMA port counters agree with the tool's byte count.
func verdictMark(r *schema.Result) string {
	v := strings.ToUpper(r.Verdict)
	if r.Path != nil && r.Path.Verified {
		v += " ✓"
	}
	return v
}

// pathCounts is the count line's tail: invalid results and verified ones.
func pathCounts(rs []schema.Result, invalid int) string {
	var s string
	if invalid > 0 {
		s += fmt.Sprintf(", %d invalid", invalid)
	}
	n := 0
	for i := range rs {
		if rs[i].Path != nil && rs[i].Path.Verified {
			n++
		}
	}
	if n > 0 {
		s += fmt.Sprintf(" (✓ %d verified by port counters)", n)
	}
	return s
}

// WritePreflightProblems writes the preflight checks that did not pass
// (fails first), one row each; nothing when every check passed.
func WritePreflightProblems(w io.Writer, eps []schema.PreflightEndpoint) error {
	rows := PreflightRows(eps, false)
	if len(rows) == 0 {
		return nil
	}
	if err := writePreflightTable(w, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WritePreflightTable writes every preflight check (`rdmabench preflight`).
func WritePreflightTable(w io.Writer, eps []schema.PreflightEndpoint) error {
	return writePreflightTable(w, PreflightRows(eps, true))
}

func writePreflightTable(w io.Writer, rows [][]string) error {
	t := term.NewTable(w, "PREFLIGHT", "ENDPOINT", "CHECK", "EVIDENCE", "FIX")
	for _, row := range rows {
		t.Append(row...)
	}
	return t.Render()
}

// PreflightRows are the checks as table rows, fails then warns (then,
// when all is set, the skips (checks of tools another check already
// keeps from running) and passes), in endpoint order.
func PreflightRows(eps []schema.PreflightEndpoint, all bool) [][]string {
	width := 90 // beside the results table
	if all {
		width = 240 // `rdmabench preflight`: the evidence is the point
	}
	var rows [][]string
	for _, st := range []string{schema.PreflightFail, schema.PreflightWarn, schema.PreflightSkip, schema.PreflightPass} {
		if st == schema.PreflightSkip && !all {
			break
		}
		for _, ep := range eps {
			if ep.Error != "" && st == schema.PreflightFail {
				rows = append(rows, []string{"ERROR", ep.Endpoint, "-", term.OneLine(ep.Error, 90), "check the endpoint is reachable"})
			}
			for _, c := range ep.Checks {
				if c.Status == st {
					rows = append(rows, []string{strings.ToUpper(c.Status), ep.Endpoint, c.ID, term.OneLine(c.Evidence, width), term.OneLine(c.Fix, width*3/4)})
				}
			}
		}
	}
	return rows
}
