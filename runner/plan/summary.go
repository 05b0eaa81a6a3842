package plan

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// LegOverhead is what a run adds around the tools' own time for each
// repetition of a leg, as measured: 160 ms wall per job of an iperf3
// server found in the pod's listen table through exec, then a 1 KiB client
// (kube backend, `make bench-kube`), 15 ms for the same on the local
// backend (`make bench-runner`). The ssh backend, not measured apart, is
// taken as kube's: each side is a remote command too.
var LegOverhead = map[string]time.Duration{
	scenarios.BackendLocal: 15 * time.Millisecond,
	scenarios.BackendSSH:   160 * time.Millisecond,
	scenarios.BackendKube:  160 * time.Millisecond,
}

// TestStats is one test of a plan, counted without building its rounds.
type TestStats struct {
	Test        string `json:"test"`
	Tool        string `json:"tool"`
	Pattern     string `json:"pattern,omitempty"`
	Rounds      int    `json:"rounds"`
	Jobs        int    `json:"jobs"`
	Legs        int    `json:"legs"`
	Repetitions int    `json:"repetitions"`
	// Estimate is how long the test should take: its rounds one after
	// another, each as long as its longest job, a job being its legs ×
	// repetitions × (the tool's time + LegOverhead). The tool's time is
	// the test's duration where it has one, else its iterations at the
	// planner's pessimistic 1 Gb/s.
	Estimate time.Duration `json:"estimate"`
}

// Totals are the plan's counts summed over its tests.
type Totals struct {
	Rounds   int           `json:"rounds"`
	Jobs     int           `json:"jobs"`
	Legs     int           `json:"legs"`
	Estimate time.Duration `json:"estimate"`
}

// Stats counts every test of the plan: the compiled ones from their
// schedules (nothing is built), rounds held in Rounds by walking them.
func (p *Plan) Stats() []TestStats {
	var out []TestStats
	held := map[string]int{}
	for _, r := range p.Rounds {
		i, ok := held[r.Test]
		if !ok {
			i = len(out)
			held[r.Test] = i
			out = append(out, TestStats{Test: r.Test})
		}
		st := &out[i]
		st.Rounds++
		st.Jobs += len(r.Jobs)
		var longest time.Duration
		for _, j := range r.Jobs {
			st.Tool, st.Pattern, st.Repetitions = j.Tool, j.Pattern, max(st.Repetitions, j.Repetitions)
			st.Legs += len(j.Legs)
			longest = max(longest, time.Duration(len(j.Legs)*max(j.Repetitions, 1))*LegOverhead[p.Backend])
		}
		st.Estimate += longest
	}
	for _, tp := range p.tests {
		out = append(out, tp.stats(p.Backend))
	}
	return out
}

func (tp *testPlan) stats(backend string) TestStats {
	tc := tp.tc
	st := TestStats{Test: tc.t.Name, Tool: tc.t.Tool, Pattern: patternOf(tc.t), Rounds: tp.sched.n,
		Jobs: tp.sched.jobs, Legs: tp.sched.edges * len(tc.variants) * tc.railFactor(), Repetitions: tc.reps}
	if tc.spec.Collective {
		st.Pattern = ""
	}
	var perEdge time.Duration // one direction's variants, every repetition
	for _, v := range tc.variants {
		perEdge += time.Duration(tc.reps) * (tools.LegWork(tc.t, v.size, v.batch) + LegOverhead[backend])
	}
	st.Estimate = time.Duration(tp.sched.n*tp.sched.perJob*tc.railFactor()) * perEdge
	return st
}

// Totals sums Stats.
func (p *Plan) Totals() Totals {
	var t Totals
	for _, st := range p.Stats() {
		t.Rounds += st.Rounds
		t.Jobs += st.Jobs
		t.Legs += st.Legs
		t.Estimate += st.Estimate
	}
	return t
}

// WriteSummary writes what a person reads first about a plan: how many
// endpoints and where, how many rounds, jobs and legs, and how long it
// should take, per test and in all. It builds no round, so it is as quick
// for 4,096 endpoints as for 4.
func WriteSummary(w io.Writer, p *Plan) error {
	tot, stats := p.Totals(), p.Stats()
	fmt.Fprintf(w, "Plan for %s (backend %s)\n\n", p.Scenario, p.Backend)
	kv := func(k, v string) { fmt.Fprintf(w, "  %-16s %s\n", k, v) }
	kv("endpoints", thousands(len(p.Endpoints))+poolCounts(p))
	kv(placementLabel(p.Backend), perNode(p))
	kv("rounds", thousands(tot.Rounds))
	kv("jobs", thousands(tot.Jobs))
	kv("legs", thousands(tot.Legs))
	kv("estimated time", fmt.Sprintf("%s (the tests' durations, else iterations at 1 Gb/s, + %s of harness per leg repetition)",
		Human(tot.Estimate), LegOverhead[p.Backend]))
	if p.Profile == scenarios.ProfileQuick {
		kv("profile", scenarios.QuickSummary)
	}
	if len(stats) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, "TEST", "TOOL", "PATTERN", "ROUNDS", "JOBS", "LEGS", "REPETITIONS", "ESTIMATED")
		for _, st := range stats {
			t.Append(st.Test, st.Tool, dashIfEmpty(st.Pattern), thousands(st.Rounds), thousands(st.Jobs),
				thousands(st.Legs), strconv.Itoa(st.Repetitions), Human(st.Estimate))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(p.Samples) > 0 {
		fmt.Fprintln(w)
		for _, s := range p.Samples {
			fmt.Fprintln(w, SampleLine(s))
		}
	}
	if p.NeedsEtcd {
		fmt.Fprintf(w, "\n%s jobs rendezvous through the run's etcd: %s.\n", etcdTools(p), etcdWhere(p.Backend))
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintln(w)
		if err := skippedTable(w, p); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "\nEvery command line: -o commands; the plan as run saves it: -o json.")
	return err
}

// SampleLine says which part of its matrix a sampled test runs.
func SampleLine(s Sample) string {
	return fmt.Sprintf("%s: a sample of %d partners per endpoint (seed %d: %d of the matrix's %d rounds, from round %d): %s of %s ordered pairs (%.1f%% of the matrix); %d consecutive seeds cover it",
		s.Test, s.Partners, s.Seed, s.Rounds, s.MatrixRounds, s.FirstRound, thousands(s.Pairs), thousands(s.MatrixPairs),
		100*float64(s.Pairs)/float64(max(s.MatrixPairs, 1)), s.RunsToCover)
}

func placementLabel(backend string) string {
	switch backend {
	case scenarios.BackendKube:
		return "pods per node"
	case scenarios.BackendSSH:
		return "per host"
	}
	return "host"
}

// poolCounts is " (prefill 4, decode 4)", or "" for one pool.
func poolCounts(p *Plan) string {
	var order []string
	n := map[string]int{}
	for _, ep := range p.Endpoints {
		if n[ep.Pool] == 0 {
			order = append(order, ep.Pool)
		}
		n[ep.Pool]++
	}
	if len(order) < 2 {
		return ""
	}
	parts := make([]string, len(order))
	for i, pool := range order {
		parts[i] = pool + " " + thousands(n[pool])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// perNode says how the endpoints share machines: kube pods by their
// anti-affinity, ssh endpoints by host, local ones all on this host.
func perNode(p *Plan) string {
	switch p.Backend {
	case scenarios.BackendKube:
		var free, keys []string
		for _, ep := range p.Endpoints {
			pl := ep.Placement
			switch {
			case pl == nil || pl.AntiAffinity == "":
				if !slices.Contains(free, ep.Pool) {
					free = append(free, ep.Pool)
				}
			case !slices.Contains(keys, pl.AntiAffinity):
				keys = append(keys, pl.AntiAffinity)
			}
		}
		if len(free) == 0 && len(keys) > 0 {
			if shared, others := sharedNodes(p); shared != "" {
				if others {
					shared += ", others 1"
				}
				return shared + " (anti-affinity on " + strings.Join(keys, ", ") + "; a node's pods held together by pod affinity)"
			}
			return "1 (anti-affinity on " + strings.Join(keys, ", ") + ")"
		}
		if len(free) > 0 {
			return "as the scheduler places them (no anti-affinity for " + strings.Join(free, ", ") + ")"
		}
		return "-"
	case scenarios.BackendSSH:
		per := map[string]int{}
		most := 0
		for _, ep := range p.Endpoints {
			per[ep.Host]++
			most = max(most, per[ep.Host])
		}
		return fmt.Sprintf("up to %d endpoints on one of %d hosts", most, len(per))
	}
	return "every endpoint on this host"
}

// sharedNodes names the pools that put several pods on one node
// (perNode) and on how many nodes: "ep 2 on each of 2 nodes, one 3 on
// each of 1 node"; ""
// for none; others says whether other endpoints are one per node.
func sharedNodes(p *Plan) (names string, others bool) {
	var order []string
	per, groups := map[string]int{}, map[string]map[string]bool{}
	for _, ep := range p.Endpoints {
		pl := ep.Placement
		if pl == nil || pl.NodeGroup == "" {
			others = true
			continue
		}
		if groups[ep.Pool] == nil {
			order = append(order, ep.Pool)
			groups[ep.Pool] = map[string]bool{}
		}
		per[ep.Pool] = pl.PerNode
		groups[ep.Pool][pl.NodeGroup] = true
	}
	parts := make([]string, len(order))
	for i, pool := range order {
		parts[i] = fmt.Sprintf("%s %d on each of %s", pool, per[pool], plural(len(groups[pool]), "node"))
	}
	return strings.Join(parts, ", "), others
}

// Human is a duration as a person reads an estimate: "3d 4h", "2h 5m",
// "4m 10s", "12.5s".
func Human(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd %dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", d/time.Hour, d%time.Hour/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %ds", d/time.Minute, d%time.Minute/time.Second)
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 || n < 0 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// plural is "1 node", "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
