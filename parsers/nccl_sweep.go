package parsers

import (
	"strconv"
	"strings"
)

// ncclSweepCut tells whether a table stopped before the sweep its banner
// announced ("minBytes 8 maxBytes 268435456 step: 2(factor)", or
// "step: 1048576(bytes)"): the size after the last row would still be within
// maxBytes. A table without footer that stops there was killed mid-sweep, so
// its largest sizes are missing. nccl-tests rounds each size of its sweep
// down to whole elements per rank before printing it, so the last row is
// matched to the smallest sweep size at or above it. It returns the last
// row's size and the maximum; false when the banner or the rows do not say.
func (r *ncclRun) ncclSweepCut() (last, max int64, cut bool) {
	n := len(r.m.Samples)
	if n == 0 || r.m.Info == nil {
		return 0, 0, false
	}
	num := func(k string) int64 {
		v, err := strconv.ParseInt(r.m.Info[k], 10, 64)
		if err != nil || v <= 0 {
			return 0
		}
		return v
	}
	min, max := num("min_bytes"), num("max_bytes")
	if v := num("max_bytes_reduced"); v > 0 && v < max {
		max = v
	}
	step, unit, _ := strings.Cut(r.m.Info["step"], "(")
	k, err := strconv.ParseInt(step, 10, 64)
	last = r.m.Samples[n-1].Bytes
	if min == 0 || max == 0 || err != nil || k <= 0 || last > max {
		return 0, 0, false
	}
	var next int64
	switch unit {
	case "factor)":
		if k < 2 {
			return 0, 0, false
		}
		s := min
		for s < last && s <= max/k {
			s *= k
		}
		next = s * k
		if s > max/k {
			next = max + 1
		}
	case "bytes)":
		s := min
		if last > min {
			s = min + (last-min+k-1)/k*k
		}
		next = s + k
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
