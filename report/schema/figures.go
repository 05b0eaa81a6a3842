package schema

import (
	"regexp"
	"strconv"
	"strings"
)

var expectationPct = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*%`)

// ExpectedPct reads the percent of an expectation such as ">= 90% of line rate".
func ExpectedPct(exp string) (float64, bool) {
	m := expectationPct.FindStringSubmatch(exp)
	if m == nil || !strings.Contains(exp, "line rate") {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// LineRateBps is the result's line rate, else its run's (0: unknown).
func (r *Result) LineRateBps(run *RunMeta) float64 {
	if r.LineRate != nil {
		return r.LineRate.Bps
	}
	if run.LineRate != nil {
		return run.LineRate.Bps
	}
	return 0
}
