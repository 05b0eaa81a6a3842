package parsers

// maxWarnings bounds Measurement.Warnings; logs can repeat a warning per rank.
const maxWarnings = 10

// runState is what the nccl-tests and nixlbench parsers keep for the run
// they are reading: the measurement so far and whether it has failed.
type runState struct {
	m        Measurement
	fail     bool
	specific bool // the failure class came from a specific message
}

// warn keeps a warning once, up to maxWarnings.
func (r *runState) warn(w string) {
	if len(r.m.Warnings) >= maxWarnings {
		return
	}
	for _, x := range r.m.Warnings {
		if x == w {
			return
		}
	}
	r.m.Warnings = append(r.m.Warnings, w)
}

// failWith marks the run failed; a specific class is never replaced by a
// generic one, and the first specific message wins.
func (r *runState) failWith(cls ErrorClass, msg string, specific bool) {
	switch {
	case !r.fail:
	case !r.specific && specific:
	default:
		return
	}
	r.fail, r.specific = true, specific
	r.m.ErrorClass, r.m.Error = cls, msg
}
