package history

import (
	"math"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/units"
)

// The step-down rule, documented in Rule and the README.
const (
	// StepK is how many noise bands a level must drop by to be a step.
	StepK = 3.0
	// StepWindow is how many runs on each side of a candidate point form
	// the levels compared (their medians).
	StepWindow = 7
	// StepMinRuns is how many runs, the step's own included, must be at
	// the new level: a single bad night is compare's job, a history
	// reports drops that held.
	StepMinRuns = 3
	// noiseFloor keeps identical figures from making any change a step:
	// the noise band is at least 0.1% of the median.
	noiseFloor = 0.001
)

// Rule documents the noise band and the step-down rule; it is
// printed with every history.
const Rule = "noise = 1.4826 × median |run-to-run difference| / √2 (a robust standard deviation " +
	"that one step barely moves; at least 0.1% of the median); a series stepped down at run i when " +
	"the median of the 7 runs from i is worse than the median of the 7 runs before i by more than " +
	"3 × noise, so is run i itself, the new level holds for at least 3 runs (i and 2 after), and the median of the last 3 runs is " +
	"still that much worse " +
	"(it stayed down); of a stretch of consecutive such runs, the first; " +
	"of several steps, the latest; worse = lower bandwidth, higher latency"

// summarise fills Latest, Best, Median, Noise and Step; scratch is reused
// between series to spare allocations.
func (s *Series) summarise(scratch []float64) []float64 {
	xs := s.Values
	if len(xs) == 0 {
		return scratch
	}
	sign := signOf(s)
	s.Latest = xs[len(xs)-1]
	s.Best = xs[0]
	for _, v := range xs {
		if v*sign > s.Best*sign {
			s.Best = v
		}
	}
	scratch = append(scratch[:0], xs...)
	s.Median = median(scratch)
	s.Noise = noiseOf(xs, s.Median, scratch)
	if i, before, after, ok := findStep(xs, sign, s.Noise, scratch); ok {
		s.Step = &Step{Index: i, Before: before, After: after}
		if before != 0 {
			s.Step.ChangePct = 100 * (after - before) / before
		}
	}
	return scratch
}

// median reorders xs and returns its median (by selection, not a sort:
// a history takes the medians of some 100,000 series of a year of runs).
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	hi := selectKth(xs, n/2)
	if n%2 == 1 {
		return hi
	}
	return (slices.Max(xs[:n/2]) + hi) / 2 // xs[:n/2] holds the n/2 smallest
}

// selectKth reorders xs so that xs[k] is the k-th smallest, xs[:k] no
// larger and xs[k+1:] no smaller (Hoare's quickselect, median-of-three
// pivots), and returns it. Figures are never NaN.
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		p := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	slices.Sort(xs[lo : hi+1])
	return xs[k]
}

// noiseOf is the robust run-to-run noise of xs (see Rule).
func noiseOf(xs []float64, med float64, scratch []float64) float64 {
	floor := noiseFloor * math.Abs(med)
	if len(xs) < 2 {
		return floor
	}
	scratch = scratch[:0]
	for i := 1; i < len(xs); i++ {
		scratch = append(scratch, math.Abs(xs[i]-xs[i-1]))
	}
	return math.Max(1.4826*median(scratch)/math.Sqrt2, floor)
}

// findStep applies the step-down rule to xs; sign is +1 where higher is
// better. It returns the index of the first run of the lower level and the
// two levels.
func findStep(xs []float64, sign, noise float64, scratch []float64) (int, float64, float64, bool) {
	n := len(xs)
	if n < 2*StepMinRuns {
		return 0, 0, 0, false
	}
	thr := StepK * noise
	tail := median(append(scratch[:0], xs[n-StepMinRuns:]...)) * sign
	// No window before any point can be that much better than the current
	// level unless some single run was: the common case ends here.
	top := math.Inf(-1)
	for _, v := range xs[:n-StepMinRuns] {
		top = math.Max(top, v*sign)
	}
	if top-tail <= thr {
		return 0, 0, 0, false
	}
	var win [StepWindow]float64
	level := func(lo, hi int) float64 {
		w := win[:0]
		for _, v := range xs[lo:hi] {
			w = append(w, v*sign)
		}
		return median(w)
	}
	best, bestBefore, bestAfter := -1, 0.0, 0.0
	inStretch := false
	for i := StepMinRuns; i <= n-StepMinRuns; i++ {
		before := level(max(0, i-StepWindow), i)
		after := level(i, min(n, i+StepWindow))
		drop := before - after
		if drop > thr && before-tail > thr && before-xs[i]*sign > thr {
			if !inStretch { // a new stretch: a later step wins; its first run is the step
				best, inStretch = i, true
				bestBefore, bestAfter = before, after
			}
			continue
		}
		inStretch = false
	}
	if best < 0 {
		return 0, 0, 0, false
	}
	return best, bestBefore * sign, bestAfter * sign, true
}

// parseRateWords reads a rate as the runner writes it in an expectation
// ("100.00 Gb/s", "45.00 GB/s").
func parseRateWords(s string) (float64, bool) {
	v, err := units.ParseRate(strings.TrimSpace(s))
	return v, err == nil && v > 0
}
