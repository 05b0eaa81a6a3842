package html

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
)

// preflightSection is the HTML's preflight section: a table per
// endpoint, every check with its status, evidence and fix.
func preflightSection(eps []schema.PreflightEndpoint) (section, bool) {
	if len(eps) == 0 {
		return section{}, false
	}
	s := section{ID: "preflight", Title: "Preflight",
		Intro: "Checked on every endpoint before the first test. A failing check skips the tests it dooms (named in their reason); a warning does not; a skip is a check of a tool whose tests another check already skips."}
	for _, ep := range eps {
		t := htmlTable{Caption: strings.TrimSpace(ep.Endpoint + " " + ep.Host + ep.Node + " " + ep.Device), Head: []string{"status", "check", "evidence", "fix"}, Statuses: true}
		if ep.Error != "" {
			t.Rows = append(t.Rows, []string{"ERROR", "-", ep.Error, "check the endpoint is reachable"})
		}
		for _, c := range ep.Checks {
			t.Rows = append(t.Rows, []string{strings.ToUpper(c.Status), c.ID, c.Evidence, c.Fix})
		}
		s.Tables = append(s.Tables, t)
	}
	return s, true
}

// samplesTable is the HTML table of the sampled matrices.
func samplesTable(cs []schema.SampleCoverage) htmlTable {
	t := htmlTable{Caption: "Sampled matrices: the share of each matrix this run measured",
		Head: []string{"test", "partners per endpoint", "seed", "rounds", "pairs measured", "of the matrix", "runs to cover"}}
	for _, c := range cs {
		t.Rows = append(t.Rows, []string{c.Test, fmt.Sprint(c.Partners), fmt.Sprint(c.Seed),
			fmt.Sprintf("%d of %d, from %d", c.Rounds, c.MatrixRounds, c.FirstRound),
			fmt.Sprintf("%d of %d", c.MeasuredPairs, c.MatrixPairs), fmt.Sprintf("%.1f%%", c.CoveredPct), fmt.Sprint(c.RunsToCover)})
	}
	return t
}
