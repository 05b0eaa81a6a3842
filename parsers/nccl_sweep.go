package parsers

import (
	"strconv"
	"strings"
)

// ncclSweepCut tells whether a table stopped before the sweep its banner
// announced ("minBytes 8 maxBytes 268435456 step: 2(factor)", or
// "step: 1048576(bytes)"): the size after the last row would still be within
// maxBytes. A table without footer that stops there was killed mid-sweep, so
// its largest sizes are missing. It returns the last row's size and the
// maximum; false when the banner or the rows do not say.
func (r *ncclRun) ncclSweepCut() (last, max int64, cut bool) {
	n := len(r.m.Samples)
	if n == 0 || r.m.Info == nil {
		return 0, 0, false
	}
	max, err := strconv.ParseInt(r.m.Info["max_bytes"], 10, 64)
	if err != nil || max <= 0 {
		return 0, 0, false
	}
	if v, err := strconv.ParseInt(r.m.Info["max_bytes_reduced"], 10, 64); err == nil && v > 0 && v < max {
		max = v
	}
	step, unit, ok := strings.Cut(r.m.Info["step"], "(")
	k, err := strconv.ParseInt(step, 10, 64)
	if !ok || err != nil || k <= 0 {
		return 0, 0, false
	}
	last = r.m.Samples[n-1].Bytes
	next := last + k
	switch unit {
	case "factor)":
		if k < 2 || last <= 0 {
			return 0, 0, false
		}
		next = last * k
	case "bytes)":
	default:
		return 0, 0, false
	}
	return last, max, next <= max
}

// ncclReducedMax reads "Reducing maxBytes to 1073741824 due to memory
// limitation": the sweep then ends there, not at the banner's maxBytes.
func ncclReducedMax(body string) string {
	f := strings.Fields(strings.TrimPrefix(body, "Reducing maxBytes to "))
	if len(f) == 0 {
		return ""
	}
	if _, err := strconv.ParseInt(f[0], 10, 64); err != nil {
		return ""
	}
	return f[0]
}
