package text

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/tool"
)

// EPIntro says in a sentence how the EP budget is reckoned.
const EPIntro = "DeepEP's dispatch + combine for one MoE layer at the slowest rank (a step waits for it), × the model's MoE layers: " +
	"the low-latency kernels (vLLM's deepep_low_latency) for every decode step, timed back to back as a step runs them where the probe did, " +
	"the normal kernels (deepep_high_throughput) for a prefill pass, each phase apart."

// EPHead is the EP budget table's header.
var EPHead = []string{"TEST", "STAGE", "TOKENS/RANK", "DISPATCH", "COMBINE", "PER LAYER", "MOE LAYERS", "ADDS"}

// EPRows are the budget's rows: test, stage, tokens per rank, each phase's
// slowest rank, one layer, the MoE layers, and what it adds.
func EPRows(b *schema.EPBudget) [][]string {
	var rows [][]string
	for _, c := range b.Rows {
		rows = append(rows, []string{c.Test, c.Stage + " (" + strings.ReplaceAll(c.Kernels, "_", "-") + " kernels)",
			fmt.Sprint(c.Tokens), epPhase(c.Dispatch, c.Ranks), epPhase(c.Combine, c.Ranks),
			perLayer(c), fmt.Sprint(c.MoELayers),
			fmt.Sprintf("%.2f ms %s", c.Ms, schema.EPStageWord(c.Stage))})
	}
	return rows
}

// perLayer: "99.10 µs (back to back, rank 2)" where the pair was timed in
// one window, else the two phases' sum.
func perLayer(c schema.EPCost) string {
	if c.Pair != nil {
		return fmt.Sprintf("%.2f µs (back to back, rank %d)", c.LayerUS, c.Pair.Rank)
	}
	return fmt.Sprintf("%.2f µs", c.LayerUS)
}

// epPhase: "38.06 µs (rank 2 of 4, FP8)", the data type from the phase's name.
func epPhase(p schema.EPPhase, ranks int) string {
	of := ""
	if ranks > 0 {
		of = fmt.Sprintf(" of %d", ranks)
	}
	dtype := ""
	if i := strings.LastIndex(p.Phase, "("); i >= 0 {
		dtype = ", " + strings.TrimSuffix(p.Phase[i+1:], ")")
	}
	return fmt.Sprintf("%.2f µs (rank %d%s%s)", p.AvgUS, p.Rank, of, dtype)
}

// EPRankRows are a DeepEP result's per-rank times: a row per phase (in the
// order the probe printed them), a column per rank, µs per call; nil rows
// for a result with no per-rank samples.
func EPRankRows(r *schema.Result) (head []string, rows [][]string) {
	if r.Family != tool.FamilyDeepEP || r.Retest > 0 {
		return nil, nil
	}
	ranks := 0
	var phases []string
	us := map[string]map[int]float64{}
	for i := range r.Samples {
		s := &r.Samples[i]
		v, ok := parsers.Figure(parsers.MetricLatency, s)
		if s.Phase == "" || s.Rank == nil || !ok {
			continue
		}
		if us[s.Phase] == nil {
			us[s.Phase] = map[int]float64{}
			phases = append(phases, s.Phase)
		}
		us[s.Phase][*s.Rank] = v
		ranks = max(ranks, *s.Rank+1)
	}
	if len(phases) == 0 {
		return nil, nil
	}
	head = []string{"phase"}
	for k := range ranks {
		head = append(head, fmt.Sprintf("rank %d", k))
	}
	for _, p := range phases {
		row := []string{p}
		for k := range ranks {
			if v, ok := us[p][k]; ok {
				row = append(row, fmt.Sprintf("%.2f", v))
			} else {
				row = append(row, "-")
			}
		}
		rows = append(rows, row)
	}
	return head, rows
}
