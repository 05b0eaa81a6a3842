package history

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/schema"
)

// History is every run found under some folders, and the figures of each
// result over those runs: one Series per scenario, test, pair, backend,
// operation, variant and message size — the same matching as Compare, so
// that a step in a history is the regression compare reports.
type History struct {
	Runs   []Run     `json:"runs"`
	Series []*Series `json:"series"`
	// Changes are the environment changes between consecutive runs of a
	// scenario (fingerprint, tool versions, scenario, line rate).
	Changes []Change `json:"changes,omitempty"`
	// Warnings name the report.json files that could not be read.
	Warnings []string `json:"warnings,omitempty"`
	// Rule says how noise and steps are found.
	Rule string `json:"rule"`
}

// Run is one run of a history.
type Run struct {
	ID           string `json:"id"`
	Scenario     string `json:"scenario"`
	ScenarioHash string `json:"scenarioHash,omitempty"`
	// Path is the run's report.json; HTML its report.html when there is one.
	Path    string    `json:"path"`
	HTML    string    `json:"html,omitempty"`
	Start   time.Time `json:"start"`
	Version string    `json:"rdmabenchVersion,omitempty"`
	// Verdict of the run as a whole: pass, fail, error or interrupted.
	Verdict      string            `json:"verdict"`
	Summary      schema.Summary    `json:"summary"`
	Fingerprint  map[string]string `json:"fingerprint,omitempty"`
	ToolVersions map[string]string `json:"toolVersions,omitempty"`
}

// Change is what changed in the environment at one run.
type Change struct {
	Run      int       `json:"run"` // index into History.Runs
	Time     time.Time `json:"time"`
	Scenario string    `json:"scenario"`
	What     []string  `json:"what"`
}

// Series is one figure (a result at one message size) over time.
type Series struct {
	Scenario string         `json:"scenario"`
	Test     string         `json:"test"`
	Tool     string         `json:"tool"`
	Family   parsers.Family `json:"family,omitempty"`
	Pair     string         `json:"pair"`
	Backend  string         `json:"backend,omitempty"`
	Op       string         `json:"op,omitempty"`
	Variant  string         `json:"variant,omitempty"`
	Bytes    int64          `json:"bytes"`
	// Metric is bw_avg_bps, busbw_bps (bit/s) or lat_avg_us (µs).
	Metric parsers.Metric `json:"metric"`
	// LineRateBps and Expect (in the metric's unit) are the latest run's.
	LineRateBps float64 `json:"lineRateBps,omitempty"`
	Expect      float64 `json:"expect,omitempty"`
	// Runs[i] is the index in History.Runs of Values[i]; chronological.
	Runs   []int32   `json:"runs"`
	Values []float64 `json:"values"`
	// While a history is built: the first run, and whether Runs is
	// written out (a series measured in every run since its first is not:
	// finish points its Runs into one shared 0, 1, 2 … array).
	first  int32
	sparse bool
	Latest float64 `json:"latest"`
	Best   float64 `json:"best"`
	Median float64 `json:"median"`
	// Noise is the run-to-run noise (a robust standard deviation, see
	// Rule), in the metric's unit.
	Noise float64 `json:"noise"`
	Step  *Step   `json:"step,omitempty"`
}

// Step is where a series stepped down (got worse) and stayed down.
type Step struct {
	Index     int       `json:"index"` // into Values
	Run       int       `json:"run"`   // into History.Runs
	RunID     string    `json:"runId"`
	Time      time.Time `json:"time"`
	Before    float64   `json:"before"`
	After     float64   `json:"after"`
	ChangePct float64   `json:"changePct"`
}

// LowerIsBetter says whether the series is a latency.
func (s *Series) LowerIsBetter() bool { return s.Metric == parsers.MetricLatency }

// Name is "test: pair [backend] @size" for tables and chart titles.
func (s *Series) Name() string {
	n := s.Test + ": " + s.Pair
	if s.Variant != "" {
		n += " [" + s.Variant + "]"
	}
	if s.Backend != "" {
		n += " [" + s.Backend + "]"
	}
	if s.Op != "" {
		n += " " + s.Op
	}
	if s.Bytes > 0 {
		n += " @" + schema.FormatSizeShort(s.Bytes)
	}
	return n
}

// Format renders a value of the series in its unit.
func (s *Series) Format(v float64) string {
	if s.LowerIsBetter() {
		return schema.FormatMicros(v)
	}
	return schema.FormatBandwidth(s.Family, v)
}

// Load reads every run under dirs (see FindReports) and builds the
// history: one series per result and size, the statistics and step of
// each, and the environment changes. Each run is read from its
// history.idx when that is current, else from report.json (LoadRunIndex).
func Load(dirs []string) *History {
	files, problems := FindReports(dirs)
	h := &History{Rule: Rule, Runs: make([]Run, 0, len(files))}
	for _, p := range problems {
		h.Warnings = append(h.Warnings, p.Error())
	}
	b := newHistoryBuilder(h, len(files))
	loadInOrder(files, func(i int, idx *RunIndex, err error) {
		if err != nil {
			h.Warnings = append(h.Warnings, err.Error()+"; skipped")
			return
		}
		b.add(files[i].Path, idx)
	})
	b.finish()
	return h
}

// Build is Load for reports already in memory (tests, library
// use); paths name them and reports must be in chronological order.
func Build(paths []string, reports []*schema.Report) *History {
	h := &History{Rule: Rule}
	b := newHistoryBuilder(h, len(reports))
	for i, r := range reports {
		b.add(paths[i], IndexOf(r))
	}
	b.finish()
	return h
}

// historyBuilder folds runs into series, one run at a time.
type historyBuilder struct {
	h *History
	// results maps scenario and compare's result key to its sizes' series.
	results map[seriesKey]*resultSeries
	last    map[string]*schema.Report // last run of each scenario, for changes
	// ident is 0, 1, … runs−1: a series measured in every run since its
	// first has Runs = a slice of it, shared, rather than a copy of its own.
	ident []int32
}

type resultSeries struct {
	sizes  []int64
	series []*Series
}

func newHistoryBuilder(h *History, runs int) *historyBuilder {
	ident := make([]int32, runs)
	for i := range ident {
		ident[i] = int32(i)
	}
	return &historyBuilder{h: h, results: map[seriesKey]*resultSeries{}, last: map[string]*schema.Report{}, ident: ident}
}

func (b *historyBuilder) add(path string, idx *RunIndex) {
	run := int32(len(b.h.Runs))
	b.h.Runs = append(b.h.Runs, historyRun(path, idx))
	cur := &schema.Report{Run: idx.Run}
	if prev := b.last[idx.Run.Scenario]; prev != nil {
		if what := compare.EnvironmentWarnings(prev, cur); len(what) > 0 {
			b.h.Changes = append(b.h.Changes, Change{Run: int(run), Time: idx.Run.Start, Scenario: idx.Run.Scenario, What: shortChanges(what)})
		}
	}
	b.last[idx.Run.Scenario] = cur
	for i := range idx.Results {
		ir := &idx.Results[i]
		k := keyOf(idx.Run.Scenario, ir)
		rs := b.results[k]
		if rs == nil {
			rs = &resultSeries{}
			b.results[k] = rs
		}
		for j, sz := range ir.Sizes {
			s := rs.find(j, sz)
			if s == nil {
				s = &Series{Scenario: idx.Run.Scenario, Test: ir.Test, Tool: ir.Tool, Family: ir.Family, Pair: ir.Pair, Backend: ir.Backend,
					Op: ir.Op, Variant: ir.Variant, Bytes: sz, Metric: ir.Metric, first: run,
					Values: make([]float64, 0, max(1, len(b.ident)-int(run)))}
				rs.sizes, rs.series = append(rs.sizes, sz), append(rs.series, s)
				b.h.Series = append(b.h.Series, s)
			}
			if !s.sparse && run != s.first+int32(len(s.Values)) {
				s.Runs, s.sparse = append(make([]int32, 0, len(s.Values)+16), b.ident[s.first:int(s.first)+len(s.Values)]...), true
			}
			if s.sparse {
				s.Runs = append(s.Runs, run)
			}
			s.Values = append(s.Values, ir.Values[j])
			s.LineRateBps, s.Expect = ir.LineRateBps, ir.Expect
		}
	}
}

// find is the series of size sz, looked for first at position hint (runs
// of a result usually list the same sizes in the same order).
func (rs *resultSeries) find(hint int, sz int64) *Series {
	if hint < len(rs.sizes) && rs.sizes[hint] == sz {
		return rs.series[hint]
	}
	for i, v := range rs.sizes {
		if v == sz {
			return rs.series[i]
		}
	}
	return nil
}

// finish summarises every series, on every core (they are independent),
// and sorts them.
func (b *historyBuilder) finish() {
	ss := b.h.Series
	workers := max(1, min(runtime.GOMAXPROCS(0), len(ss)/1000))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func(part []*Series) {
			defer wg.Done()
			var scratch []float64
			for _, s := range part {
				if !s.sparse {
					s.Runs = b.ident[s.first : int(s.first)+len(s.Values) : int(s.first)+len(s.Values)]
				}
				scratch = s.summarise(scratch)
				if s.Step != nil {
					s.Step.Run = int(s.Runs[s.Step.Index])
					s.Step.RunID, s.Step.Time = b.h.Runs[s.Step.Run].ID, b.h.Runs[s.Step.Run].Start
				}
			}
		}(ss[w*len(ss)/workers : (w+1)*len(ss)/workers])
	}
	wg.Wait()
	sortSeries(ss)
}

// sortSeries puts what a reader must see first: series that stepped down
// (largest drop first), then the rest by how far their latest value is
// below their median, then by name.
func sortSeries(ss []*Series) {
	worse := func(s *Series) float64 {
		if s.Step != nil {
			return -1e9 + s.Step.ChangePct*signOf(s)
		}
		if s.Median == 0 {
			return 0
		}
		return (s.Latest - s.Median) / s.Median * signOf(s)
	}
	sort.SliceStable(ss, func(i, j int) bool {
		a, b := worse(ss[i]), worse(ss[j])
		if a != b {
			return a < b
		}
		if ss[i].Scenario != ss[j].Scenario {
			return ss[i].Scenario < ss[j].Scenario
		}
		if ss[i].Test != ss[j].Test {
			return ss[i].Test < ss[j].Test
		}
		if ss[i].Pair != ss[j].Pair {
			return schema.NaturalLess(ss[i].Pair, ss[j].Pair)
		}
		if ss[i].Bytes != ss[j].Bytes {
			return ss[i].Bytes < ss[j].Bytes
		}
		return ss[i].Backend+"\x00"+ss[i].Op+"\x00"+ss[i].Variant < ss[j].Backend+"\x00"+ss[j].Op+"\x00"+ss[j].Variant
	})
}

// signOf is +1 where higher is better, −1 for latencies.
func signOf(s *Series) float64 {
	if s.LowerIsBetter() {
		return -1
	}
	return 1
}

func historyRun(path string, idx *RunIndex) Run {
	r := &idx.Run
	hr := Run{ID: r.ID, Scenario: r.Scenario, ScenarioHash: r.ScenarioHash, Path: path,
		Start: r.Start, Version: r.Version, Summary: idx.Summary, Verdict: idx.Verdict,
		Fingerprint: r.Fingerprint, ToolVersions: r.ToolVersions}
	if html := filepath.Join(filepath.Dir(path), "report.html"); fileExists(html) {
		hr.HTML = html
	}
	return hr
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// RunVerdict is a run's verdict as a whole: interrupted (cut short, or
// ended with a harness error), error (some result errored), fail (some
// result fell short), else pass — also when nothing ran.
func RunVerdict(r *schema.Report) string {
	s := r.Summary
	if s.Total == 0 && len(r.Results) > 0 {
		s = schema.CountVerdicts(r.Results)
	}
	switch {
	case r.Run.Interrupted || r.Run.Error != "":
		return "interrupted"
	case s.Error > 0:
		return schema.VerdictError
	case s.Fail > 0 || s.Invalid > 0:
		return schema.VerdictFail
	}
	return schema.VerdictPass
}

// expectationLevel reads the level an expectation sets for the metric,
// from the runner's words: ">= 90% of line rate", ">= 100.00 Gb/s",
// "average latency <= 5us".
func expectationLevel(exp string, metric parsers.Metric, lineRate float64) (float64, bool) {
	for _, rule := range strings.Split(exp, ", ") {
		rule = strings.TrimSpace(rule)
		switch {
		case metric == parsers.MetricLatency && strings.HasPrefix(rule, "average latency <= "):
			var v float64
			if _, err := fmt.Sscanf(strings.TrimPrefix(rule, "average latency <= "), "%gus", &v); err == nil {
				return v, true
			}
		case metric == parsers.MetricLatency:
		case strings.Contains(rule, "of line rate") && !strings.Contains(rule, "not judged"):
			if p, ok := schema.ExpectedPct(rule); ok && lineRate > 0 {
				return lineRate * p / 100, true
			}
		case strings.HasPrefix(rule, ">= ") && metric == "bw_avg_bps":
			if v, ok := parseRateWords(strings.TrimPrefix(rule, ">= ")); ok {
				return v, true
			}
		case strings.HasPrefix(rule, "bus bandwidth >= ") && metric == "busbw_bps":
			if v, ok := parseRateWords(strings.TrimPrefix(rule, "bus bandwidth >= ")); ok {
				return v, true
			}
		}
	}
	return 0, false
}

// shortChanges drops the "environment differs: " prefix of compare's
// warnings for chart labels.
func shortChanges(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strings.TrimPrefix(w, "environment differs: ")
	}
	return out
}
