package parsers

import (
	"strings"
)

// ucxTable is one results table of ucx_perftest being read.
type ucxTable struct {
	latency  bool   // "latency (usec)" rather than "overhead (usec)"
	pctl     string // the percentile column: "50.0%ile", "typical" …
	finalRow bool   // -f: the single row under the header is the final one
	csv      bool
	last     *Sample // latest progress figures
	final    *Sample
}

// row reads a progress, final, -f or CSV row; false if line is none.
func (p *ucxParser) row(line string) bool {
	t := p.table
	progress := false
	if strings.HasPrefix(line, "[thread ") {
		if i := strings.IndexByte(line, ']'); i > 0 {
			line, progress = strings.TrimSpace(line[i+1:]), true
		}
	}
	final := false
	if rest, ok := strings.CutPrefix(line, "Final:"); ok {
		line, final = rest, true
	}
	var fs []string
	if t.csv {
		fs = strings.Split(line, ",")
	} else {
		fs = splitWS(strings.ReplaceAll(line, ",", ""), p.fields[:0])
	}
	s, ok := t.sample(fs)
	if !ok {
		return false
	}
	s.Bytes = p.size
	switch {
	case final || (!progress && (t.finalRow || t.csv)):
		t.final = &s
		if !t.csv {
			p.close()
		}
	default:
		t.last = &s
	}
	return true
}

// sample maps the 8 columns (iterations, percentile, average, overall
// latency; bandwidth average, overall; message rate average, overall) or
// the 4 of a multi-thread final line.
func (t *ucxTable) sample(fs []string) (Sample, bool) {
	var v [8]float64
	if len(fs) != 8 && len(fs) != 4 {
		return Sample{}, false
	}
	for i, f := range fs {
		x, ok := finiteFloat(strings.TrimSpace(f))
		if !ok && len(fs) == 8 && (i == 2 || i == 4 || i == 6) && isNonFinite(strings.TrimSpace(f)) {
			// The last interval's averages: ucx_perftest prints "inf" (and
			// 0.00 beside it) when that interval took no measurable time, as
			// it did between the soft-RoCE VMs under emulation. The figures
			// read are the overall ones.
			x, ok = 0, true
		}
		if !ok {
			return Sample{}, false
		}
		v[i] = x
	}
	if len(fs) == 4 { // iterations, overall latency, overall bw, overall rate
		v = [8]float64{v[0], -1, v[1], v[1], v[2], v[2], v[3], v[3]}
	}
	s := Sample{Iterations: int64(v[0]), BWAvgBps: F(v[5] * mibPerSecBits), MsgRatePPS: F(v[7])}
	if t.latency {
		s.LatAvgUS = F(v[3])
		if v[1] >= 0 {
			switch {
			case strings.HasPrefix(t.pctl, "50.0") || t.pctl == "typical" || t.pctl == "50.0_percentile_lat":
				s.LatTypicalUS = F(v[1])
			case strings.HasPrefix(t.pctl, "99.0"):
				s.LatP99US = F(v[1])
			case strings.HasPrefix(t.pctl, "99.9"):
				s.LatP999US = F(v[1])
			}
		}
	}
	return s, true
}

// isNonFinite: "inf", "-inf", "nan", "-nan" as printf writes them.
func isNonFinite(s string) bool {
	switch strings.ToLower(strings.TrimPrefix(s, "-")) {
	case "inf", "nan", "infinity":
		return true
	}
	return false
}

// ucxCSVPercentile returns the second CSV column name, e.g. "50.0_percentile_lat".
func ucxCSVPercentile(header string) string {
	cols := strings.Split(header, ",")
	if len(cols) > 1 {
		return cols[1]
	}
	return ""
}
