package schema

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/units"
)

// Low pair statuses: what the retests said.
const (
	LowPairBad      = "bad"      // low in the matrix and on every retest
	LowPairFlaky    = "flaky"    // low on some retests, recovered on others
	LowPairNoise    = "noise"    // recovered on every retest
	LowPairUntested = "untested" // no retests asked for (or run)
)

// LowPairRule is a test's expect.lowPair as the run resolved it.
type LowPairRule struct {
	// BelowPct is the threshold, a percent of the reference.
	BelowPct float64 `json:"belowPct"`
	// Of is "best" (the best pair of the matrix) or "expectation".
	Of      string `json:"of"`
	Retests int    `json:"retests"`
	// ExpectBps is the expectation's bandwidth (of: expectation).
	ExpectBps float64 `json:"expectBps,omitempty"`
}

// LowPairAnalysis is what the low pairs of one all-to-all test say: which
// pairs were low, whether they stayed low on retest, and which endpoint or
// link they have in common.
type LowPairAnalysis struct {
	Test         string        `json:"test"`
	Rule         LowPairRule   `json:"rule"`
	ReferenceBps float64       `json:"referenceBps"`
	ThresholdBps float64       `json:"thresholdBps"`
	Pairs        int           `json:"pairs"`
	Low          []LowPair     `json:"low,omitempty"`
	Endpoints    []LowEndpoint `json:"endpoints,omitempty"`
	// Suspects are the endpoints (or links) the confirmed low pairs share.
	Suspects []Suspect `json:"suspects,omitempty"`
	// Findings say it in words, most important first.
	Findings []string `json:"findings"`
}

// LowPair is one ordered pair below the threshold in the matrix.
type LowPair struct {
	From string  `json:"from"`
	To   string  `json:"to"`
	Bps  float64 `json:"bps"`
	// RetestBps is the best bandwidth of each retest, in order.
	RetestBps []float64 `json:"retestBps,omitempty"`
	Status    string    `json:"status"`
}

// LowEndpoint counts the confirmed low pairs an endpoint takes part in.
type LowEndpoint struct {
	Name     string `json:"name"`
	Node     string `json:"node,omitempty"`
	Device   string `json:"device,omitempty"`
	LowPairs int    `json:"lowPairs"`
}

// Suspect is an endpoint or a link the low pairs point at.
type Suspect struct {
	Kind     string `json:"kind"` // "endpoint" or "link"
	Name     string `json:"name"`
	Detail   string `json:"detail,omitempty"`
	LowPairs int    `json:"lowPairs"`
	Of       int    `json:"of"`
}

// pairFigure is the best bandwidth of one ordered pair in one retest round.
type pairFigure struct {
	from, to string
	bps      float64
}

// matrixFigures is the best bandwidth of each ordered pair of test in
// retest round n (0: the matrix itself), over sizes and backends. A leg
// that measured nothing (error) counts as 0: a dead link is the lowest pair.
func matrixFigures(results []Result, test string, n int) []pairFigure {
	idx := map[[2]string]int{}
	var out []pairFigure
	for i := range results {
		r := &results[i]
		if r.Test != test || r.Retest != n || r.From == "" || r.To == "" || r.Verdict == VerdictSkipped {
			continue
		}
		k := [2]string{r.From, r.To}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, pairFigure{from: r.From, to: r.To})
		}
		out[j].bps = max(out[j].bps, r.BestBps)
	}
	return out
}

// LowPairThreshold is the reference (best pair or expectation) and the
// bandwidth below which a pair of the matrix is low.
func LowPairThreshold(results []Result, test string, rule LowPairRule) (ref, threshold float64) {
	if rule.Of == "expectation" {
		ref = rule.ExpectBps
	} else {
		for _, f := range matrixFigures(results, test, 0) {
			ref = max(ref, f.bps)
		}
	}
	return ref, ref * rule.BelowPct / 100
}

// LowPairs lists the ordered pairs of test's matrix below the threshold,
// lowest first: what the executor retests.
func LowPairs(results []Result, test string, rule LowPairRule) [][2]string {
	_, th := LowPairThreshold(results, test, rule)
	figs := matrixFigures(results, test, 0)
	sort.SliceStable(figs, func(i, j int) bool { return figs[i].bps < figs[j].bps })
	var out [][2]string
	for _, f := range figs {
		if f.bps < th {
			out = append(out, [2]string{f.from, f.to})
		}
	}
	return out
}

// AnalyzeLowPairs finds the low pairs of test's matrix, reads their
// retests, and ranks the endpoints by how many confirmed low pairs (bad,
// flaky or untested; not noise) they take part in. Pure.
func AnalyzeLowPairs(results []Result, endpoints []EndpointInfo, test string, rule LowPairRule) LowPairAnalysis {
	a := LowPairAnalysis{Test: test, Rule: rule}
	a.ReferenceBps, a.ThresholdBps = LowPairThreshold(results, test, rule)
	a.Pairs = len(matrixFigures(results, test, 0))
	retests := map[[2]string][]float64{}
	for n := 1; n <= rule.Retests; n++ {
		for _, f := range matrixFigures(results, test, n) {
			k := [2]string{f.from, f.to}
			retests[k] = append(retests[k], f.bps)
		}
	}
	figs := matrixFigures(results, test, 0)
	sort.SliceStable(figs, func(i, j int) bool { return figs[i].bps < figs[j].bps })
	for _, f := range figs {
		if f.bps >= a.ThresholdBps {
			continue
		}
		lp := LowPair{From: f.from, To: f.to, Bps: f.bps, RetestBps: retests[[2]string{f.from, f.to}]}
		lp.Status = lowPairStatus(lp.RetestBps, a.ThresholdBps)
		a.Low = append(a.Low, lp)
	}
	a.rank(endpoints)
	a.findings(endpoints)
	return a
}

func lowPairStatus(retests []float64, threshold float64) string {
	if len(retests) == 0 {
		return LowPairUntested
	}
	low := 0
	for _, b := range retests {
		if b < threshold {
			low++
		}
	}
	switch low {
	case len(retests):
		return LowPairBad
	case 0:
		return LowPairNoise
	}
	return LowPairFlaky
}

// confirmed are the low pairs that did not recover on retest.
func (a *LowPairAnalysis) confirmed() []LowPair {
	var out []LowPair
	for _, lp := range a.Low {
		if lp.Status != LowPairNoise {
			out = append(out, lp)
		}
	}
	return out
}

func (a *LowPairAnalysis) rank(endpoints []EndpointInfo) {
	count := map[string]int{}
	for _, lp := range a.confirmed() {
		count[lp.From]++
		count[lp.To]++
	}
	info := endpointIndex(endpoints)
	for name, n := range count {
		e := info[name]
		a.Endpoints = append(a.Endpoints, LowEndpoint{Name: name, Node: nodeOrHost(e), Device: e.Device, LowPairs: n})
	}
	sort.Slice(a.Endpoints, func(i, j int) bool {
		if a.Endpoints[i].LowPairs != a.Endpoints[j].LowPairs {
			return a.Endpoints[i].LowPairs > a.Endpoints[j].LowPairs
		}
		return NaturalLess(a.Endpoints[i].Name, a.Endpoints[j].Name)
	})
}

func endpointIndex(eps []EndpointInfo) map[string]EndpointInfo {
	m := map[string]EndpointInfo{}
	for _, e := range eps {
		m[e.Name] = e
	}
	return m
}

func nodeOrHost(e EndpointInfo) string {
	if e.Node != "" {
		return e.Node
	}
	return e.Host
}

// where describes an endpoint for a finding: "node gpu-node-03, mlx5_2".
func where(e LowEndpoint) string {
	var parts []string
	if e.Node != "" {
		parts = append(parts, "node "+e.Node)
	}
	if e.Device != "" {
		parts = append(parts, e.Device)
	}
	return strings.Join(parts, ", ")
}

// findings names the suspects: an endpoint in more than half of the
// confirmed low pairs (and at least two) is suspect; when the top two are
// tied and every low pair lies between them, the link is.
func (a *LowPairAnalysis) findings(endpoints []EndpointInfo) {
	if a.ReferenceBps <= 0 && a.Pairs > 0 {
		// A threshold of 0 finds nothing: say so instead of "no pair low".
		why := "no pair of the matrix measured any bandwidth"
		if a.Rule.Of == "expectation" {
			why = "the expectation is minLineRate and this run has no line rate " +
				"(set lineRate: 400Gb/s in the scenario, or auto where the NIC's speed can be read), and no minBandwidth"
		}
		a.Findings = append(a.Findings, fmt.Sprintf("low pairs not judged among %d pairs: %s", a.Pairs, why))
		return
	}
	conf := a.confirmed()
	th := fmt.Sprintf("%s (%.0f%% of the %s, %s)", units.FormatRate(a.ThresholdBps), a.Rule.BelowPct, refWord(a.Rule.Of), units.FormatRate(a.ReferenceBps))
	if len(a.Low) == 0 {
		a.Findings = append(a.Findings, fmt.Sprintf("no pair of %d below %s", a.Pairs, th))
		return
	}
	total := len(conf)
	explained := map[string]bool{}
	if total > 0 {
		top := a.Endpoints[0].LowPairs
		var tied []LowEndpoint
		for _, e := range a.Endpoints {
			if e.LowPairs == top {
				tied = append(tied, e)
			}
		}
		switch {
		case len(tied) == 2 && top == total && betweenOnly(conf, tied[0].Name, tied[1].Name):
			name := tied[0].Name + " ↔ " + tied[1].Name
			detail := fmt.Sprintf("%s: %s; %s: %s", tied[0].Name, where(tied[0]), tied[1].Name, where(tied[1]))
			a.Suspects = append(a.Suspects, Suspect{Kind: "link", Name: name, Detail: detail, LowPairs: total, Of: total})
			a.Findings = append(a.Findings, fmt.Sprintf("every low pair (%d) is between %s and %s: suspect the link %s (%s)", total, tied[0].Name, tied[1].Name, name, detail))
			explained[tied[0].Name], explained[tied[1].Name] = true, true
		case top >= 2 && 2*top > total:
			for _, e := range tied {
				a.Suspects = append(a.Suspects, Suspect{Kind: "endpoint", Name: e.Name, Detail: where(e), LowPairs: top, Of: total})
				s := fmt.Sprintf("%s is in %d of %d low pairs: suspect %s", e.Name, top, total, e.Name)
				if w := where(e); w != "" {
					s += " (" + w + ")"
				}
				a.Findings = append(a.Findings, s)
				explained[e.Name] = true
			}
		}
		for _, lp := range conf {
			if !explained[lp.From] && !explained[lp.To] {
				a.Suspects = append(a.Suspects, Suspect{Kind: "link", Name: lp.From + " → " + lp.To, LowPairs: 1, Of: total})
				a.Findings = append(a.Findings, fmt.Sprintf("%s → %s is %s at %s: suspect that link", lp.From, lp.To, lp.Status, units.FormatRate(lp.Bps)))
			}
		}
	}
	for _, lp := range a.Low {
		if lp.Status == LowPairNoise {
			a.Findings = append(a.Findings, fmt.Sprintf("%s → %s was low (%s) and recovered on %d of %d retests: noise, not a bad link",
				lp.From, lp.To, units.FormatRate(lp.Bps), len(lp.RetestBps), len(lp.RetestBps)))
		}
	}
	a.Findings = append(a.Findings, fmt.Sprintf("%d of %d pairs below %s; %d confirmed", len(a.Low), a.Pairs, th, total))
}

func refWord(of string) string {
	if of == "expectation" {
		return "expectation"
	}
	return "best pair"
}

func betweenOnly(lps []LowPair, a, b string) bool {
	for _, lp := range lps {
		if !(lp.From == a && lp.To == b) && !(lp.From == b && lp.To == a) {
			return false
		}
	}
	return true
}
