package html

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
)

// A sampled matrix's coverage counts the ordered pairs with a result
// (errors count: the pair was tried; skips and retests do not), and the
// HTML's matrix section and the terminal say the share.
func TestSampleCoverage(t *testing.T) {
	r := fixture.Full(1)
	results := []schema.Result{
		{Test: "s", From: "a", To: "b", Verdict: schema.VerdictPass, BestBps: 1},
		{Test: "s", From: "b", To: "a", Verdict: schema.VerdictError},
		{Test: "s", From: "a", To: "b", Verdict: schema.VerdictPass, BestBps: 2, Retest: 1},
		{Test: "s", From: "a", To: "c", Verdict: schema.VerdictSkipped},
		{Test: "other", From: "c", To: "d", Verdict: schema.VerdictPass},
	}
	c := schema.SampleCoverage{Test: "s", Partners: 1, Seed: 9, FirstRound: 2, Rounds: 1, MatrixRounds: 3, PlannedPairs: 3, MatrixPairs: 12, RunsToCover: 3}
	c.Covered(results)
	if c.MeasuredPairs != 2 || c.CoveredPct < 16.66 || c.CoveredPct > 16.67 {
		t.Fatalf("coverage %+v, want 2 pairs, 16.7%%", c)
	}
	c.Test = "fabric-a2a"
	r.Samples = []schema.SampleCoverage{c}
	html := string(renderHTML(t, r))
	for _, want := range []string{"Sampled matrices: the share of each matrix this run measured", "1 of 3, from 2", "2 of 12", "16.7%"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	var terminal strings.Builder
	if err := text.WriteInsights(&terminal, r); err != nil {
		t.Fatal(err)
	}
	want := "fabric-a2a: a sample of 1 partners per endpoint (seed 9: 1 of the matrix's 3 rounds, from round 2): 2 of 12 ordered pairs measured, 16.7% of the matrix; 3 runs with consecutive seeds cover it"
	if !strings.Contains(terminal.String(), want) {
		t.Errorf("terminal lacks %q:\n%s", want, terminal.String())
	}
}
