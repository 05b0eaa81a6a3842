package text

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
)

// EPIntro says in a sentence how the EP budget is reckoned.
const EPIntro = "DeepEP's dispatch + combine for one MoE layer, each phase at its slowest rank (a step waits for it), × the model's MoE layers: " +
	"the low-latency kernels (vLLM's deepep_low_latency) for every decode step, the normal kernels (deepep_high_throughput) for a prefill pass."

// EPHead is the EP budget table's header.
var EPHead = []string{"TEST", "STAGE", "TOKENS/RANK", "DISPATCH", "COMBINE", "PER LAYER", "MOE LAYERS", "ADDS"}

// EPRows are the budget's rows: test, stage, tokens per rank, each phase's
// slowest rank, one layer, the MoE layers, and what it adds.
func EPRows(b *schema.EPBudget) [][]string {
	var rows [][]string
	for _, c := range b.Rows {
		rows = append(rows, []string{c.Test, c.Stage + " (" + strings.ReplaceAll(c.Kernels, "_", "-") + " kernels)",
			fmt.Sprint(c.Tokens), epPhase(c.Dispatch, c.Ranks), epPhase(c.Combine, c.Ranks),
			fmt.Sprintf("%.2f µs", c.LayerUS), fmt.Sprint(c.MoELayers),
			fmt.Sprintf("%.2f ms %s", c.Ms, schema.EPStageWord(c.Stage))})
	}
	return rows
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
