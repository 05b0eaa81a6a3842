package e2erdma

import (
	"fmt"
	"time"
)

// The VM lanes' emulated work (TCG: every guest instruction translated)
// runs as fast as this host's cores are free, which differs several-fold
// between a quiet development machine and a loaded or slower one. Bounds
// that fit one host's speed fail another's, so the node lane measures the
// host's pace on its own work and scales its bounds by it.

// Reference figures: the same steps on the 2-core development host with
// nothing else running (docs/development/softroce.md).
const (
	// RefBoot is both VMs booted (kernel, modules, rxe0, dropbear).
	RefBoot = 15 * time.Second
	// RefImportPerMB is join.sh's image import per MB of the archive
	// (containerd ingests, digests and unpacks every byte in the VM).
	RefImportPerMB = 800 * time.Millisecond
)

// Pace is how many times slower than the reference host this one runs the
// VMs' work (never below 1), and what it was measured on.
type Pace struct {
	Factor float64
	Basis  string
}

// PaceOf is the pace of a step that took took here and ref on the
// reference host.
func PaceOf(what string, took, ref time.Duration) Pace {
	f := took.Seconds() / ref.Seconds()
	return Pace{Factor: max(f, 1), Basis: fmt.Sprintf("%s %.1fs (reference %.1fs: ×%.2f)", what, took.Seconds(), ref.Seconds(), f)}
}

// Slower is the slower of two paces (the bounds follow the slowest step
// measured), with both bases.
func (p Pace) Slower(q Pace) Pace {
	basis := p.Basis + "; " + q.Basis
	if q.Factor > p.Factor {
		return Pace{Factor: q.Factor, Basis: basis}
	}
	return Pace{Factor: p.Factor, Basis: basis}
}

// Scale is d at this pace, rounded to the second.
func (p Pace) Scale(d time.Duration) time.Duration {
	f := p.Factor
	if f < 1 {
		f = 1
	}
	return time.Duration(float64(d) * f).Round(time.Second)
}

// String says the factor and what it was measured on (for the test log).
func (p Pace) String() string { return fmt.Sprintf("×%.2f (%s)", max(p.Factor, 1), p.Basis) }

// Budget fits a step's bound into what is left of the lane's own bound
// (the test binary's -timeout) less reserve (what must still run after
// it: clean-up, leaving the cluster). ok is false when less than need is
// left: the step cannot be given the least it needs.
func Budget(want, reserve, need time.Duration, deadline time.Time, hasDeadline bool, now time.Time) (time.Duration, bool) {
	if !hasDeadline {
		return want, true
	}
	left := deadline.Sub(now) - reserve
	if left < need {
		return max(left, 0), false
	}
	return min(want, left).Round(time.Second), true
}
