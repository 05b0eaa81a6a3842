package parsers

import (
	"math"
	"strconv"
	"strings"
)

// ncclLayout is the column order of one nccl-tests table, read from its
// header because it changed across generations (root and redop columns,
// "error" vs "#wrong", per-iteration columns, cputime).
type ncclLayout struct {
	ident []string    // size count type redop root (some may be absent)
	half  [2][]string // out-of-place and in-place columns
}

// ncclHalfCols are the names a table half may hold.
var ncclHalfCols = map[string]bool{
	"time": true, "cputime": true, "algbw": true, "busbw": true, "#wrong": true, "error": true,
	"i_min": true, "i_max": true, "i_p99": true, "i_cv%": true,
}

// ncclParseLayout reads the column-name header line ("size count type …");
// nil when the line is not one.
func ncclParseLayout(fields []string) *ncclLayout {
	if len(fields) < 4 || fields[0] != "size" || fields[1] != "count" {
		return nil
	}
	lay := &ncclLayout{}
	h := -1
	for _, f := range fields {
		if f == "time" || f == "cputime" {
			h++
			if h > 1 {
				break
			}
		}
		switch {
		case h < 0:
			lay.ident = append(lay.ident, f)
		case ncclHalfCols[f]:
			lay.half[h] = append(lay.half[h], f)
		default:
			h = 2 // "timestamp" (-S) and anything unknown end the halves
		}
		if h > 1 {
			break
		}
	}
	if len(lay.half[0]) == 0 {
		return nil
	}
	return lay
}

// ncclGuessLayout picks a layout from the number of fields for rows seen
// without their header (fragments, elided captures).
func ncclGuessLayout(n int) *ncclLayout {
	cur := []string{"time", "algbw", "busbw", "#wrong"}
	old := []string{"time", "algbw", "busbw", "error"}
	iter := []string{"time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%"}
	switch n {
	case 13:
		return &ncclLayout{ident: []string{"size", "count", "type", "redop", "root"}, half: [2][]string{cur, cur}}
	case 12:
		return &ncclLayout{ident: []string{"size", "count", "type", "redop"}, half: [2][]string{old, old}}
	case 11:
		return &ncclLayout{ident: []string{"size", "count", "type"}, half: [2][]string{old, old}}
	case 21:
		return &ncclLayout{ident: []string{"size", "count", "type", "redop", "root"}, half: [2][]string{iter, iter}}
	}
	return nil
}

// parseRow turns whitespace-split row fields into a Sample. A row cut short
// (a failure printed in its middle) keeps what it has if the out-of-place
// half is complete; otherwise it is not a row.
func (l *ncclLayout) parseRow(f []string) (Sample, bool) {
	var s Sample
	ni := len(l.ident)
	if len(f) < ni+len(l.half[0]) {
		return s, false
	}
	for i, name := range l.ident {
		if !ncclIdent(&s, name, f[i]) {
			return s, false
		}
	}
	rest := f[ni:]
	vals := &ncclVals{}
	for h := 0; h < 2; h++ {
		cols := l.half[h]
		if len(rest) < len(cols) || len(cols) == 0 {
			break
		}
		for i, name := range cols {
			if !ncclCell(&s, vals, h == 1, name, rest[i]) {
				return s, h == 1
			}
		}
		rest = rest[len(cols):]
	}
	return s, true
}

// ncclIdent fills the identity columns; size and count must be integers.
func ncclIdent(s *Sample, name, v string) bool {
	switch name {
	case "size":
		n, err := strconv.ParseInt(v, 10, 64)
		s.Bytes = n
		return err == nil
	case "count":
		n, err := strconv.ParseInt(v, 10, 64)
		s.Count = n
		return err == nil
	case "type":
		s.DataType = v
	case "redop":
		s.RedOp = v
	case "root":
		n, err := strconv.Atoi(v)
		if err != nil {
			return false
		}
		s.Root = &n
	}
	return true
}

// ncclVals holds the numbers of one row, so that a row costs one
// allocation instead of one per pointer field.
type ncclVals struct {
	f  [12]float64
	nf int
	i  [2]int64
	ni int
}

func (v *ncclVals) float(x float64) *float64 {
	if v.nf == len(v.f) {
		return F(x)
	}
	v.f[v.nf] = x
	v.nf++
	return &v.f[v.nf-1]
}

func (v *ncclVals) int(x int64) *int64 {
	if v.ni == len(v.i) {
		return &x
	}
	v.i[v.ni] = x
	v.ni++
	return &v.i[v.ni-1]
}

// ncclCell fills one measured cell; false when the value is not a number
// where one must be (the row is then not a table row).
func ncclCell(s *Sample, vals *ncclVals, inplace bool, name, v string) bool {
	x, ok := ncclNum(v)
	if !ok {
		return ncclIsNA(v)
	}
	switch name {
	case "time", "cputime":
		ncclPick(inplace, &s.TimeUS, &s.InplaceTimeUS, vals.float(x))
	case "algbw":
		ncclPick(inplace, &s.AlgBWBps, &s.InplaceAlgBWBps, vals.float(math.Round(x*8e9)))
	case "busbw":
		ncclPick(inplace, &s.BusBWBps, &s.InplaceBusBWBps, vals.float(math.Round(x*8e9)))
	case "error":
		ncclPick(inplace, &s.MaxError, &s.InplaceMaxError, vals.float(x))
	case "#wrong":
		if inplace {
			s.InplaceWrong = vals.int(int64(x))
		} else {
			s.Wrong = vals.int(int64(x))
		}
	}
	return true
}

func ncclPick(inplace bool, out, in **float64, v *float64) {
	if inplace {
		*in = v
	} else {
		*out = v
	}
}

// ncclNum parses a number as the tools print it ("1.29813e+06", "2e-07",
// "13552"); NaN and infinities are refused so they never reach JSON.
func ncclNum(v string) (float64, bool) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

// ncclIsNA reports placeholders printed instead of a number.
func ncclIsNA(v string) bool {
	switch strings.ToLower(v) {
	case "n/a", "nan", "-nan", "inf", "-inf", "+inf":
		return true
	}
	return false
}

// ncclSampleWrong reports a row whose validation failed: #wrong > 0.
func ncclSampleWrong(s Sample) bool {
	return (s.Wrong != nil && *s.Wrong > 0) || (s.InplaceWrong != nil && *s.InplaceWrong > 0)
}

// ncclDeltaMax is the legacy (<= 2.11) per-type tolerance of the "error"
// column (nccl-tests' DeltaMaxValue); the tool flagged a row when the
// deviation exceeded it times (ranks - 1).
func ncclDeltaMax(dtype string) float64 {
	switch dtype {
	case "half", "bfloat16", "bf16":
		return 1e-2
	case "float":
		return 1e-5
	case "double":
		return 1e-12
	}
	return 1e-200
}
