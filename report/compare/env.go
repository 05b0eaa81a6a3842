package compare

import (
	"fmt"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/units"
)

// EnvironmentWarnings says what differs between the systems two runs
// measured: a changed firmware or MTU explains a change better than the fabric.
func EnvironmentWarnings(base, cur *schema.Report) []string {
	var w []string
	keys := map[string]bool{}
	for k := range base.Run.Fingerprint {
		keys[k] = true
	}
	for k := range cur.Run.Fingerprint {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		b, bok := base.Run.Fingerprint[k]
		c, cok := cur.Run.Fingerprint[k]
		switch {
		case bok && cok && b != c:
			w = append(w, fmt.Sprintf("environment differs: %s was %q, now %q", k, b, c))
		case bok && !cok:
			w = append(w, fmt.Sprintf("environment differs: %s was %q, now unknown", k, b))
		case !bok && cok:
			w = append(w, fmt.Sprintf("environment differs: %s was unknown, now %q", k, c))
		}
	}
	w = append(w, toolVersionWarnings(base.Run.ToolVersions, cur.Run.ToolVersions)...)
	if base.Run.ScenarioHash != cur.Run.ScenarioHash {
		w = append(w, fmt.Sprintf("scenario differs: %s (%s) vs %s (%s)",
			base.Run.Scenario, ShortHash(base.Run.ScenarioHash), cur.Run.Scenario, ShortHash(cur.Run.ScenarioHash)))
	}
	if lb, lc := base.Run.LineRate, cur.Run.LineRate; lb != nil && lc != nil && lb.Bps != lc.Bps {
		w = append(w, fmt.Sprintf("line rate differs: %s vs %s", units.FormatRate(lb.Bps), units.FormatRate(lc.Bps)))
	}
	return w
}

// toolVersionWarnings says which tools reported another version: the
// runner records them on every run, where the fingerprint is often
// unknown, and a new UCX or perftest explains a change as a firmware does.
// A tool that ran in one run only is not a difference.
func toolVersionWarnings(base, cur map[string]string) []string {
	tools := make([]string, 0, len(base))
	for t := range base {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	var w []string
	for _, t := range tools {
		if c, ok := cur[t]; ok && c != base[t] {
			w = append(w, fmt.Sprintf("tool version differs: %s was %q, now %q", t, base[t], c))
		}
	}
	return w
}

// runWarnings says when the current run did not finish: its missing
// results were never measured, and it must not become the next baseline.
func runWarnings(cur *schema.Report) []string {
	var w []string
	if cur.Run.Interrupted {
		w = append(w, fmt.Sprintf("current run %s was interrupted after %d result(s)", cur.Run.ID, len(cur.Results)))
	}
	if cur.Run.Error != "" {
		w = append(w, "current run ended with an error: "+term.OneLine(cur.Run.Error, 120))
	}
	return w
}

// ShortHash is a scenario hash cut for a message: "sha256:" and 12 digits.
func ShortHash(hash string) string {
	if len(hash) > 19 {
		return hash[:19]
	}
	return hash
}

// Estimates returns the metric per size: from Stats when the runner
// computed them, else from the repetitions, else the samples (N = 1).
func Estimates(r *schema.Result, metric parsers.Metric) map[int64]*Estimate {
	out := map[int64]*Estimate{}
	for _, st := range r.Stats {
		if st.Metric == metric && st.N > 0 {
			out[st.Bytes] = &Estimate{Mean: st.Mean, Stddev: st.Stddev, N: st.N}
		}
	}
	if len(out) > 0 {
		return out
	}
	if ok := fromRepetitions(r, metric, out); ok {
		return out
	}
	for _, s := range r.Samples {
		if v, ok := parsers.Figure(metric, &s); ok {
			out[s.Bytes] = &Estimate{Mean: v, N: 1}
		}
	}
	return out
}

func fromRepetitions(r *schema.Result, metric parsers.Metric, out map[int64]*Estimate) bool {
	vals := map[int64][]float64{}
	for _, rep := range r.Repetitions {
		if !rep.OK {
			continue
		}
		for _, s := range rep.Samples {
			if v, ok := parsers.Figure(metric, &s); ok {
				vals[s.Bytes] = append(vals[s.Bytes], v)
			}
		}
	}
	for sz, xs := range vals {
		if len(xs) < 2 {
			return false
		}
		m, sd := stat.MeanStdDev(xs, nil)
		out[sz] = &Estimate{Mean: m, Stddev: sd, N: len(xs)}
	}
	return len(out) > 0
}
