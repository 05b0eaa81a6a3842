package text

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/units"
)

// The derived views in words: the rows the terminal aligns here and the
// HTML puts in its tables beside the charts.

// Rates lists bandwidths ("-" for none): a low pair's retests.
func Rates(bps []float64) string {
	var s []string
	for _, b := range bps {
		s = append(s, units.FormatRate(b))
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

// Percent is p as "92.3%", "-" when unknown.
func Percent(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *p)
}

// WaterfallRows are a waterfall's rows: layer, test, best, percent of the
// line rate, percent of the layer below.
func WaterfallRows(w schema.Waterfall) [][]string {
	var rows [][]string
	for _, l := range w.Layers {
		below := Percent(l.PctOfBelow)
		if l.Below != "" {
			below += " of " + l.Below
		}
		rows = append(rows, []string{l.Layer, l.Test, units.FormatRate(l.BestBps), Percent(l.PctLineRate), below})
	}
	return rows
}

// KVIntro says in a sentence what a KV budget costs: the model's shape (s
// may be nil), the KV per token, each decode rank's share and the block.
func KVIntro(s *schema.ServingSetup, b *schema.KVBudget) string {
	shape := ""
	if s != nil {
		name := s.Model
		if name == "" {
			name = "model"
		}
		if s.LatentDim > 0 {
			shape = fmt.Sprintf("%s: %d layers × MLA latent %d × %s", name, s.Layers, s.LatentDim, s.KVDtype)
		} else {
			shape = fmt.Sprintf("%s: %d layers × 2 (K, V) × %d KV heads × head dim %d × %s", name, s.Layers, s.KVHeads, s.HeadDim, s.KVDtype)
		}
		shape += fmt.Sprintf(", prefill TP %d → decode TP %d, %d-token blocks. ", s.PrefillTP, s.DecodeTP, s.BlockTokens)
	}
	return fmt.Sprintf("%s%s of KV per token; each decode rank pulls %s of a request at once over its own NIC, in %s blocks (the nixlbench size the bandwidth is read at; the worst pair per backend).",
		shape, units.FormatSize(b.BytesPerToken), shareText(b.RankShare), units.FormatSize(b.BlockBytes))
}

func shareText(f float64) string {
	if f >= 1 {
		return "all"
	}
	return fmt.Sprintf("1/%d", int(math.Round(1/f)))
}

// KVRows are the budget's rows: source, bandwidth, then per context length
// "ms (request bytes / rank bytes)".
func KVRows(b *schema.KVBudget) [][]string {
	var rows [][]string
	for _, src := range b.Rows {
		name := src.Source
		if src.Backend != "" {
			name += " " + src.Backend
		}
		bw := units.FormatRate(src.Bps)
		if src.AtBytes > 0 {
			bw += " @" + schema.FormatSizeShort(src.AtBytes)
		}
		if src.Measured {
			bw += " (measured)"
		}
		row := []string{name, bw}
		for _, c := range src.Costs {
			if c.Missing {
				row = append(row, "not measured")
				continue
			}
			row = append(row, fmt.Sprintf("%.2f ms (%s / %s)", c.TTFTms, units.FormatSize(c.RequestBytes), units.FormatSize(c.RankBytes)))
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteInsights writes the derived views under the summary table: the
// waterfall per pair, the low-pair findings, the KV and EP budgets. Nothing when
// the run has none.
func WriteInsights(w io.Writer, r *schema.Report) error {
	var b strings.Builder
	writeSamples(&b, r.Samples)
	for _, wf := range schema.WaterfallsOf(r) {
		fmt.Fprintf(&b, "\nWaterfall %s:\n", wf.Pair)
		writeAligned(&b, append([][]string{{"LAYER", "TEST", "BEST", "% LINE", "% OF BELOW"}}, WaterfallRows(wf)...))
	}
	for _, a := range r.LowPairs {
		fmt.Fprintf(&b, "\nLow pairs of %s:\n", a.Test)
		for _, f := range a.Findings {
			fmt.Fprintf(&b, "  %s\n", f)
		}
		if len(a.Low) > 0 {
			rows := [][]string{{"PAIR", "MATRIX", "RETESTS", "STATUS"}}
			for _, lp := range a.Low {
				rows = append(rows, []string{lp.From + " → " + lp.To, units.FormatRate(lp.Bps), Rates(lp.RetestBps), lp.Status})
			}
			writeAligned(&b, rows)
		}
	}
	for _, a := range schema.RailReachOf(r) {
		writeRailReach(&b, a)
	}
	if kb := schema.KVBudgetOf(r); kb != nil {
		fmt.Fprintf(&b, "\nKV-transfer budget: %s\n", KVIntro(r.Serving, kb))
		head := []string{"FROM", "BANDWIDTH"}
		for _, n := range kb.Contexts {
			head = append(head, fmt.Sprintf("%d TOKENS", n))
		}
		writeAligned(&b, append([][]string{head}, KVRows(kb)...))
	}
	if eb := schema.EPBudgetOf(r); eb != nil {
		fmt.Fprintf(&b, "\nEP budget: %s\n", EPIntro)
		writeAligned(&b, append([][]string{EPHead}, EPRows(eb)...))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// maxRailRows bounds the terminal's rail pairs: a big matrix lists its
// blocked pairs only (report.json and the HTML hold every pair).
const maxRailRows = 32

// writeRailReach is one cross-rail test's verdict, its rail pairs and the
// HCA settings that follow.
func writeRailReach(b *strings.Builder, a schema.RailReach) {
	fmt.Fprintf(b, "\nEvery expert can cross? %s: %s\n", a.Test, a.Verdict)
	for _, f := range a.Findings {
		fmt.Fprintf(b, "  %s\n", f)
	}
	pairs := a.Pairs
	if len(pairs) > maxRailRows {
		pairs = a.Blocked
	}
	if len(pairs) > 0 && len(pairs) <= maxRailRows {
		writeAligned(b, append([][]string{{"FROM", "TO", "STATUS", "WHY"}}, RailPairRows(pairs)...))
	}
	if len(a.HCA) > 0 {
		b.WriteString("  HCA settings for this fabric:\n")
		rows := make([][]string, 0, len(a.HCA))
		for _, h := range a.HCA {
			rows = append(rows, []string{" " + h.Name + "=" + h.Value, h.Why})
		}
		writeAligned(b, rows)
	}
}

// RailPairRows are rail pairs as table rows: from, to, status, why.
func RailPairRows(ps []schema.RailPair) [][]string {
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, []string{railCell(p.From, p.FromRail, p.FromDevice), railCell(p.To, p.ToRail, p.ToDevice), p.Status, p.Reason})
	}
	return rows
}

func railCell(ep string, rail int, dev string) string {
	s := fmt.Sprintf("%s rail%d", ep, rail)
	if dev != "" {
		s += " " + dev
	}
	return s
}

// writeAligned writes rows as space-aligned columns, indented by two.
func writeAligned(b *strings.Builder, rows [][]string) {
	width := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		line.WriteString(" ")
		for i, c := range r {
			line.WriteString("  " + c + strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// writeSamples is the terminal's lines about sampled matrices.
func writeSamples(b *strings.Builder, cs []schema.SampleCoverage) {
	if len(cs) == 0 {
		return
	}
	b.WriteString("\nSampled matrices:\n")
	for _, c := range cs {
		fmt.Fprintf(b, "  %s\n", c.Line())
	}
}
