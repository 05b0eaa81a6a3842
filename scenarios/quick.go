package scenarios

// ProfileQuick names the --quick profile in a plan and a report.
const ProfileQuick = "quick"

// QuickSummary says what the quick profile changed, for the plan and the
// report: a first look, not figures to compare with full runs.
const QuickSummary = "quick profile (--quick): 1 repetition, at most 2 sizes per list and 2 context lengths, sweeps from maxSize/16, durations at most 3s: a first look, not figures to compare with a full run"

// quickMaxDuration caps time-based tests (perftest -D, iperf3 -t) in the
// quick profile.
const quickMaxDuration = "3s"

// Quick turns a loaded scenario into its quick profile, in place: one
// repetition per test, the first and last of each size list and of the
// serving context lengths, sweeps that start at a sixteenth of their
// largest size (five steps at ×2), and time-based tests of at most 3 s.
// It applies after validation; what it writes is valid.
func Quick(s *Scenario) {
	one := 1
	s.Defaults.Repetitions = &one
	for i := range s.Tests {
		t := &s.Tests[i]
		t.Repetitions = &one
		quickArgs(&t.Args)
	}
	if s.Serving != nil {
		if c := s.Serving.Resolved().ContextLengths; len(c) > 2 {
			s.Serving.ContextLengths = []int{c[0], c[len(c)-1]}
		}
	}
}

func quickArgs(a *Args) {
	if n := len(a.Sizes); n > 2 {
		a.Sizes = []Size{a.Sizes[0], a.Sizes[n-1]}
	}
	if a.MaxSize.Parse() == nil && a.MaxSize.Bytes > 0 {
		floor := a.MaxSize.Bytes / 16
		if a.MinSize.Parse() != nil || a.MinSize.Bytes < floor {
			a.MinSize = Size{Raw: sizeText(floor), Bytes: floor}
		}
	}
	if a.Duration.IsSet() {
		if a.Duration.Value == 0 {
			_ = a.Duration.Parse()
		}
		capd := Duration{Raw: quickMaxDuration}
		_ = capd.Parse()
		if a.Duration.Value > capd.Value {
			a.Duration = capd
		}
	}
}

// sizeText writes a byte count as a size the scenario reads back.
func sizeText(n int64) string {
	return humanBytes(n)
}
