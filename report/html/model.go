package html

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
	"github.com/rdmabench/rdmabench/units"
)

// Options tunes Write.
type Options struct {
	// RawBase is the path from the HTML file's folder to the run folder,
	// prefixed to raw output links ("" when the HTML sits in the run folder).
	RawBase string
}

// page is what the template renders.
type page struct {
	Title    string
	Run      schema.RunMeta
	Duration string
	LineRate string
	Counts   schema.Summary
	Env      [][2]string
	Rows     []verdictRow
	Sections []section
	Charts   []chartSpec
	ECharts  string
	// Conclusion is the first line (conclusion); LineRateNote says why
	// "% of line rate" is "-" in every row, where it is.
	Conclusion, LineRateNote string
}

// section is one heading of the report with its charts and tables.
type section struct {
	ID, Title, Intro string
	Charts           []chartSpec
	Tables           []htmlTable
}

// htmlTable is a small table under a section (slow endpoints, NIXL winners).
type htmlTable struct {
	Caption string
	Head    []string
	Rows    [][]string
	// Statuses: the first column is a status (PASS, FAIL …), coloured.
	Statuses bool
}

// verdictRow is one line of the verdict summary.
type verdictRow struct {
	Verdict, Test, Tool, Backend, Pair, PairTitle string
	// Expect is the rule the verdict judged ("at least 90% of line rate").
	Expect string
	// Nodes is where the pair ran ("node-a → node-b"), shown under it.
	Nodes string
	// SameReason: the row above in the same test has this row's reason.
	SameReason                                   bool
	Best, Eff, Transport, TransportClass, Reason string
	EffWidth                                     float64
	Raw                                          []rawLink
	Folded                                       bool
	// Verified: the RDMA port counters agree with the tool (PathTitle says how).
	Verified  bool
	PathTitle string
	// Health is "congested", "lossy" or both when the path's congestion or
	// loss counters moved over the leg (HealthTitle: which, by how much).
	Health, HealthTitle string
}

type rawLink struct{ Name, Href string }

func buildPage(r *schema.Report, o Options) *page {
	p := &page{Title: "rdmabench report " + r.Run.ID, Run: r.Run, Counts: schema.CountVerdicts(r.Results)}
	if !r.Run.End.IsZero() {
		p.Duration = r.Run.End.Sub(r.Run.Start).Round(1e9).String()
	}
	if lr := r.Run.LineRate; lr != nil {
		rate := "unknown"
		if lr.Bps > 0 {
			rate = units.FormatRate(lr.Bps)
		}
		p.LineRate = fmt.Sprintf("%s (%s: %s)", rate, lr.Source, lr.Detail)
	}
	p.Conclusion, p.LineRateNote = conclusion(r), lineRateNote(r)
	p.Env = environmentRows(r.Run)
	p.Rows = verdictRows(r, o)
	p.Sections = buildSections(r)
	if s, ok := preflightSection(r.Preflight); ok {
		p.Sections = append([]section{s}, p.Sections...)
	}
	n := 0
	for si := range p.Sections {
		for ci := range p.Sections[si].Charts {
			n++
			c := &p.Sections[si].Charts[ci]
			c.ID = fmt.Sprintf("chart-%d", n)
			if c.Height == 0 {
				c.Height = 340
			}
			c.Option = optionJSON(c.Option)
			if c.pairChartFollows {
				c.PairChart = fmt.Sprintf("chart-%d", n+1)
			}
			p.Charts = append(p.Charts, *c)
		}
	}
	return p
}

func environmentRows(m schema.RunMeta) [][2]string {
	var rows [][2]string
	add := func(k, v string) {
		if v != "" {
			rows = append(rows, [2]string{k, v})
		}
	}
	add("hosts", listBrief(m.Hosts))
	add("nodes", listBrief(m.Nodes))
	for _, m := range []map[string]string{m.Fingerprint, m.ToolVersions} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(k, m[k])
		}
	}
	return rows
}

// listBrief joins a list of hosts or nodes; a long one (a 256-node run)
// keeps its first and last few, with the count: report.json has them all.
func listBrief(xs []string) string {
	const keep = 6
	if len(xs) <= 2*keep+4 {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%d: %s, … %s (all in report.json)", len(xs),
		strings.Join(xs[:keep], ", "), strings.Join(xs[len(xs)-keep:], ", "))
}

// htmlPassesPerTest bounds the passing rows of one test in the HTML
// summary, as in the terminal; the heatmap shows the rest.
const htmlPassesPerTest = 12

func verdictRows(r *schema.Report, o Options) []verdictRow {
	eps := map[string]schema.EndpointInfo{}
	for _, e := range r.Endpoints {
		eps[e.Name] = e
	}
	var rows []verdictRow
	shown := map[string]int{}
	folded := map[string]*text.FoldedPasses{}
	var order []string
	for _, i := range schema.WorstFirst(r.Results) {
		res := &r.Results[i]
		if res.Verdict == schema.VerdictPass && shown[res.Test] >= htmlPassesPerTest {
			if folded[res.Test] == nil {
				folded[res.Test] = &text.FoldedPasses{Tool: res.Tool}
				order = append(order, res.Test)
			}
			folded[res.Test].Add(res)
			continue
		}
		shown[res.Test]++
		rows = append(rows, verdictRowOf(res, o, eps))
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		rows[i].SameReason = b.Reason != "" && a.Reason == b.Reason
	}
	for _, t := range order {
		cells := folded[t].Row(t)
		rows = append(rows, verdictRow{Verdict: schema.VerdictPass, Test: t, Tool: cells[2], Pair: cells[4], Eff: cells[6], Reason: "all pass", Folded: true})
	}
	return rows
}

func verdictRowOf(res *schema.Result, o Options, eps map[string]schema.EndpointInfo) verdictRow {
	row := verdictRow{Verdict: res.Verdict, Test: res.Test, Tool: res.Tool, Backend: res.Backend, Pair: res.Label(),
		Best: res.Headline(), Eff: schema.FormatEfficiency(res.Efficiency), Transport: res.TransportLabel(), Reason: res.Reason}
	if res.Efficiency != nil {
		row.EffWidth = min(max(*res.Efficiency, 0), 100)
	}
	row.TransportClass = map[string]string{"RDMA": "rdma", "TCP fallback": "tcp", "TCP": "tcp-ok", "shm": "shm", "GPU P2P": "shm", "none (1 rank)": "shm"}[row.Transport]
	if row.TransportClass == "" {
		row.TransportClass = "unknown"
	}
	row.Expect = res.Expectation
	var where, nodes []string
	for _, e := range resultEndpoints(res, eps) {
		where = append(where, strings.Join(strings.Fields(fmt.Sprintf("%s %s: %s %s %s", e.Role, e.Name, e.Node, e.Device, e.Address)), " "))
		if e.Node != "" && (len(nodes) == 0 || nodes[len(nodes)-1] != e.Node) {
			nodes = append(nodes, e.Node)
		}
	}
	row.Nodes = strings.Join(nodes, " → ")
	if len(nodes) > 8 { // a 256-rank NCCL job: its first and last nodes, and how many
		row.Nodes = fmt.Sprintf("%s → … → %s (%d nodes)", strings.Join(nodes[:3], " → "), strings.Join(nodes[len(nodes)-3:], " → "), len(nodes))
	}
	row.PairTitle = strings.Join(where, "\n")
	if res.Path != nil {
		row.Verified, row.PathTitle = res.Path.Verified, res.Path.Detail
		if h := res.Path.Health; h != "" && h != schema.HealthClean {
			row.Health, row.HealthTitle = h, res.Path.HealthDetail
		}
	}
	for i, raw := range res.RawOutputs {
		row.Raw = append(row.Raw, rawLink{Name: rawLabel(raw, i), Href: path.Join(o.RawBase, raw)})
	}
	return row
}

// rawLabel names a raw output link briefly: its side when the file name
// says it (server, client, initiator, target, rank N), else its number.
// A discarded attempt's file (….attempt-N.out, run again after a
// clock_error) says so.
func rawLabel(p string, i int) string {
	base := strings.ToLower(path.Base(p))
	attempt := ""
	if j := strings.LastIndex(base, ".attempt-"); j >= 0 {
		attempt = " (attempt " + strings.TrimSuffix(base[j+len(".attempt-"):], ".out") + ")"
	}
	for _, side := range []string{"server", "client", "initiator", "target", "rank"} {
		if strings.Contains(base, side) {
			return side + attempt
		}
	}
	return fmt.Sprintf("log %d", i+1) + attempt
}

// resultEndpoints are a result's sides: its own Endpoints, else the run's
// endpoints named From (client) and To (server).
func resultEndpoints(res *schema.Result, eps map[string]schema.EndpointInfo) []schema.ResultEndpoint {
	if len(res.Endpoints) > 0 {
		return res.Endpoints
	}
	var out []schema.ResultEndpoint
	for _, side := range []struct{ role, name string }{{"client", res.From}, {"server", res.To}} {
		if e, ok := eps[side.name]; ok {
			node := e.Node
			if node == "" {
				node = e.Host
			}
			out = append(out, schema.ResultEndpoint{Role: side.role, Name: e.Name, Node: node, Device: e.Device, Address: e.Address})
		}
	}
	return out
}
