package runner

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// Not a terminal: one compact line per round and per finished leg.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 2)
	p.round(0, &plan.Round{Test: "write-bw", Jobs: make([]plan.Job, 2)})
	p.start(&plan.Job{ID: "j", Legs: make([]plan.Leg, 1)}, 0, 0, 1)
	eff := 93.5
	p.leg(schema.Result{JobID: "write-bw/r0/a-0->b-0", Variant: "65536", Verdict: schema.VerdictPass, BestBps: 374e9, BestBytes: 65536, Efficiency: &eff, Seconds: 3.2})
	p.leg(schema.Result{JobID: "rping/r0/a-0->b-0", Verdict: schema.VerdictError, Reason: "timed out after 31s\nmore", Seconds: 31})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %d:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{
		"round 1/2: write-bw (2 job(s))",
		"pass    write-bw/r0/a-0->b-0 [65536]  374.00 Gb/s @ 64KiB (93.5% of line rate)  (3.2s)",
		"error   rping/r0/a-0->b-0  (31.0s)  timed out after 31s",
	} {
		if !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d: %q, want suffix %q", i, lines[i], want)
		}
	}
	if strings.Contains(buf.String(), "\r") {
		t.Error("a live status line was drawn on a non-terminal")
	}
}

// Each round says about how long the run has left, from the plan's own
// estimate (what `plan` prints), counting down round by round.
func TestProgressETA(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 3)
	p.estimate([]plan.TestStats{{Test: "write-bw", Rounds: 2, Estimate: 20e9}, {Test: "iperf3", Rounds: 1, Estimate: 5e9}})
	p.round(0, &plan.Round{Test: "write-bw", Jobs: make([]plan.Job, 1)})
	p.round(1, &plan.Round{Test: "write-bw", Jobs: make([]plan.Job, 1)})
	p.round(2, &plan.Round{Test: "iperf3", Jobs: make([]plan.Job, 1)})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i, want := range []string{"round 1/3: write-bw (1 job(s)); about 25.0s left", "round 2/3: write-bw (1 job(s)); about 15.0s left", "round 3/3: iperf3 (1 job(s)); about 5.0s left"} {
		if i >= len(lines) || !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d: want suffix %q in\n%s", i, want, buf.String())
		}
	}
}
