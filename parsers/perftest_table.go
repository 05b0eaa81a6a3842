package parsers

import (
	"sort"
	"strings"
)

// ptColKind names one column of a perftest result table.
type ptColKind int

const (
	ptBytes ptColKind = iota
	ptIters
	ptBWPeak
	ptBWAvg
	ptMsgRate
	ptTMin
	ptTMax
	ptTTypical
	ptTAvg
	ptTStdev
	ptP99
	ptP999
	ptTPS
	ptIgnored // #sl, per-port figures, CPU_Util
)

// ptColumnNames are the header texts of every perftest table column
// (perftest_parameters.h RESULT_FMT*), found by text, not by position.
var ptColumnNames = []struct {
	text string
	kind ptColKind
}{
	{"#bytes", ptBytes},
	{"#sl", ptIgnored},
	{"#iterations", ptIters},
	{"BW peak[", ptBWPeak},
	{"BW average[", ptBWAvg},
	{"MsgRate[", ptMsgRate},
	{"BW Port1[", ptIgnored},
	{"MsgRate Port1[", ptIgnored},
	{"BW Port2[", ptIgnored},
	{"MsgRate Port2[", ptIgnored},
	{"t_min[", ptTMin},
	{"t_max[", ptTMax},
	{"t_typical[", ptTTypical},
	{"t_avg[", ptTAvg},
	{"t_stdev[", ptTStdev},
	{"99% percentile[", ptP99},
	{"99.9% percentile[", ptP999},
	{"tps average", ptTPS},
	{"CPU_Util[", ptIgnored},
}

// ptLayout is a parsed table header: the columns in order and the factor
// that turns the bandwidth columns into bits per second.
type ptLayout struct {
	cols    []ptColKind
	bwScale float64 // 0: unit not understood, bandwidth left out
	unit    string  // the unit as printed: "MB/sec", "MiB/sec", "Gb/sec"
}

// Bandwidth factors. perftest's "MB/sec" (before 2024) was already MiB/s.
const (
	mibPerSecBits = 1 << 20 * 8
	gbPerSecBits  = 1e9
)

// parsePtHeader reads a " #bytes …" header line; ok is false when it holds
// fewer than two known columns.
func parsePtHeader(line string) (ptLayout, bool) {
	type found struct {
		at   int
		kind ptColKind
	}
	var fs []found
	for _, c := range ptColumnNames {
		if i := strings.Index(line, c.text); i >= 0 {
			fs = append(fs, found{i, c.kind})
		}
	}
	if len(fs) < 2 {
		return ptLayout{}, false
	}
	sort.Slice(fs, func(a, b int) bool { return fs[a].at < fs[b].at })
	l := ptLayout{}
	for _, f := range fs {
		l.cols = append(l.cols, f.kind)
	}
	l.unit, l.bwScale = ptUnit(line)
	l.unit = strings.Clone(l.unit)
	return l, true
}

// ptUnit reads the unit inside "BW average[...]".
func ptUnit(line string) (string, float64) {
	i := strings.Index(line, "BW average[")
	if i < 0 {
		return "", 0
	}
	rest := line[i+len("BW average["):]
	j := strings.IndexByte(rest, ']')
	if j < 0 {
		return "", 0
	}
	unit := rest[:j]
	switch unit {
	case "MB/sec", "MiB/sec":
		return unit, mibPerSecBits
	case "Gb/sec":
		return unit, gbPerSecBits
	}
	return unit, 0
}

// row parses one table row; ok is false for anything that is not a row of
// this table (foreign lines, cut rows). Figures are allocated from slab.
func (l ptLayout) row(fields []string, slab *floatSlab) (Sample, bool) {
	if len(fields) != len(l.cols) || len(fields) > 16 {
		return Sample{}, false
	}
	var vals [16]float64
	var have [16]bool
	for i, f := range fields {
		v, ok := finiteFloat(f)
		if !ok && !isNoFigure(f) {
			return Sample{}, false
		}
		vals[i], have[i] = v, ok
	}
	var s Sample
	for i, kind := range l.cols {
		if kind == ptBytes || kind == ptIters {
			n, ok := parseCount(fields[i])
			if kind == ptBytes && !ok {
				return Sample{}, false
			}
			if kind == ptBytes {
				s.Bytes = n
			} else {
				s.Iterations = n
			}
			continue
		}
		if !have[i] {
			continue
		}
		l.set(&s, kind, vals[i], slab)
	}
	return s, true
}

// set stores one figure of a row in the sample, in the sample's units.
func (l ptLayout) set(s *Sample, kind ptColKind, v float64, slab *floatSlab) {
	switch kind {
	case ptBWPeak:
		// 0.00 means "not measured" (-D, -N, iters > 20000, receiver).
		if v != 0 && l.bwScale != 0 {
			s.BWPeakBps = slab.ptr(v * l.bwScale)
		}
	case ptBWAvg:
		if l.bwScale != 0 {
			s.BWAvgBps = slab.ptr(v * l.bwScale)
		}
	case ptMsgRate:
		s.MsgRatePPS = slab.ptr(v * 1e6)
	case ptTMin:
		s.LatMinUS = slab.ptr(v)
	case ptTMax:
		s.LatMaxUS = slab.ptr(v)
	case ptTTypical:
		s.LatTypicalUS = slab.ptr(v)
	case ptTAvg:
		s.LatAvgUS = slab.ptr(v)
	case ptTStdev:
		s.LatStdevUS = slab.ptr(v)
	case ptP99:
		s.LatP99US = slab.ptr(v)
	case ptP999:
		s.LatP999US = slab.ptr(v)
	case ptTPS:
		s.MsgRatePPS = slab.ptr(v)
	}
}

// floatSlab hands out *float64 from shared blocks: a sweep has thousands
// of figures, and one allocation each would dominate parsing.
type floatSlab struct{ block []float64 }

func (f *floatSlab) ptr(v float64) *float64 {
	if len(f.block) == cap(f.block) {
		f.block = make([]float64, 0, 512)
	}
	f.block = append(f.block, v)
	return &f.block[len(f.block)-1]
}
