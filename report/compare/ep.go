package compare

import (
	"fmt"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/tool"
)

// compareEP compares two runs of a DeepEP probe test by their EP budget
// rather than size by size (its samples are per rank and phase, and the
// normal kernels' bytes follow the routing): per stage, one MoE layer's
// dispatch + combine at the slowest rank, in µs, lower is better; the note
// says what it comes to per output token or prefill pass. nil unless both
// results have a budget (an error now is then judged as any other result).
func compareEP(b, c *schema.Result, opt Options) []Row {
	if b.Family != tool.FamilyDeepEP || c.Family != tool.FamilyDeepEP {
		return nil
	}
	bb, cb := schema.BuildEPBudget([]schema.Result{*b}), schema.BuildEPBudget([]schema.Result{*c})
	if bb == nil || cb == nil {
		return nil
	}
	base := map[string]schema.EPCost{}
	for _, r := range bb.Rows {
		base[r.Stage] = r
	}
	var rows []Row
	seen := map[string]bool{}
	for _, cur := range cb.Rows {
		seen[cur.Stage] = true
		row := epRow(c, cur)
		row.Current = &Estimate{Mean: cur.LayerUS, N: 1}
		was, ok := base[cur.Stage]
		if !ok {
			row.Status, row.Note = StatusNew, "EP "+cur.Stage+": not in the baseline"
			rows = append(rows, row)
			continue
		}
		row.Baseline = &Estimate{Mean: was.LayerUS, N: 1}
		apart := ""
		if (was.Pair == nil) != (cur.Pair == nil) {
			// One timed the pair back to back (the launch gap counts), the
			// other the phases apart: compared on what both measured.
			was, cur = phasesApart(was), phasesApart(cur)
			row.Baseline.Mean, row.Current.Mean = was.LayerUS, cur.LayerUS
			apart = "; dispatch + combine timed apart (one run has no back-to-back pair)"
		}
		classify(&row, opt, true)
		row.Note = epNote(was, cur) + apart + noteSuffix(row.Note)
		rows = append(rows, row)
	}
	for _, was := range bb.Rows {
		if !seen[was.Stage] {
			row := epRow(c, was)
			row.Baseline = &Estimate{Mean: was.LayerUS, N: 1}
			row.Status, row.Note, row.Lost = StatusMissing, "EP "+was.Stage+": not measured now", true
			rows = append(rows, row)
		}
	}
	return rows
}

func epRow(r *schema.Result, e schema.EPCost) Row {
	row := wholeRow(r, "", "")
	row.Metric, row.Variant = parsers.MetricLatency, "EP budget "+e.Stage
	return row
}

// epNote: "EP decode ×58: 5.92 → 6.40 ms/token".
func epNote(was, cur schema.EPCost) string {
	per := "ms/token"
	if cur.Stage == schema.EPStagePrefill {
		per = "ms/prefill"
	}
	layers := fmt.Sprint(cur.MoELayers)
	if was.MoELayers != cur.MoELayers {
		layers = fmt.Sprintf("%d→%d", was.MoELayers, cur.MoELayers)
	}
	return fmt.Sprintf("EP %s ×%s: %.2f → %.2f %s", cur.Stage, layers, was.Ms, cur.Ms, per)
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}

// phasesApart is e costed as dispatch + combine, each at its slowest rank,
// as a budget without the back-to-back pair is.
func phasesApart(e schema.EPCost) schema.EPCost {
	e.Pair, e.LayerUS = nil, e.Dispatch.AvgUS+e.Combine.AvgUS
	e.Ms = e.LayerUS * float64(e.MoELayers) / 1000
	return e
}
