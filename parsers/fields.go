package parsers

import (
	"math"
	"strconv"
	"strings"
)

// splitWS splits s on runs of blanks and tabs into buf (reused to avoid an
// allocation per table row). Tools overflow their printf widths, so fields
// are never read by column position.
func splitWS(s string, buf []string) []string {
	buf = buf[:0]
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		if i > start {
			buf = append(buf, s[start:i])
		}
	}
	return buf
}

// finiteFloat parses a number as the tools print it (2, 6 decimals,
// exponents). NaN and infinities are refused: they cannot travel in JSON
// and say "no figure", not a value.
func finiteFloat(s string) (float64, bool) {
	if v, ok := fastDecimal(s); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// isNoFigure reports the words tools print in place of a number.
func isNoFigure(s string) bool {
	switch strings.ToLower(s) {
	case "nan", "-nan", "inf", "-inf", "n/a":
		return true
	}
	return false
}

// optFloat returns a pointer to the finite value of s, or nil.
func optFloat(s string, scale float64) *float64 {
	v, ok := finiteFloat(s)
	if !ok {
		return nil
	}
	return F(v * scale)
}

// parseCount parses a non-negative integer count, accepting "1e6" forms.
func parseCount(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, n >= 0
	}
	v, ok := finiteFloat(s)
	if !ok || v < 0 || v > math.MaxInt64/2 || v != math.Trunc(v) {
		return 0, false
	}
	return int64(v), true
}

// isDashLine reports a table separator: a long run of '-' (perftest uses
// 87 or 163, nixlbench 80 or 160).
func isDashLine(s string) bool {
	if len(s) < 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '-' {
			return false
		}
	}
	return true
}

// signature ties a message a tool prints to what it means.
type signature struct {
	text  string
	class ErrorClass
}

// matchSignature returns the first signature whose text occurs in line.
func matchSignature(line string, sigs []signature) (signature, bool) {
	for _, s := range sigs {
		if strings.Contains(line, s.text) {
			return s, true
		}
	}
	return signature{}, false
}

// infoKey turns a header label such as "Number of qps" or "GID index" into
// the Info key "number_of_qps" / "gid_index".
func infoKey(label string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(strings.TrimSpace(label)) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			under = false
			continue
		}
		under = true
	}
	return b.String()
}

// failed builds the one measurement a failed run yields.
func failed(tool string, class ErrorClass, msg string) Measurement {
	return Measurement{Tool: tool, OK: false, ErrorClass: class, Error: msg, Samples: []Sample{}}
}

// pow10 holds the powers of ten that are exact in a float64.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// fastDecimal parses the plain "[-]123.456" form that table rows are made
// of, with at most 15 digits: mantissa and power of ten are then exact, so
// one division rounds correctly and the result equals strconv.ParseFloat's.
// Anything else (exponents, long numbers, words) returns false.
func fastDecimal(s string) (float64, bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	if s == "" || len(s) > 16 {
		return 0, false
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	v := float64(mant) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}
