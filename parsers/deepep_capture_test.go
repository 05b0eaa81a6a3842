package parsers

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDeepEPH100Capture replays testdata/gpu/h100-deepep (README there):
// DeepEP V1's own tests and the DeepEP probe, the same shapes on 4×H100.
// Every rank's records are read (DeepEP's low-latency test prints the
// four ranks' "Dispatch + combine" on one line), and the probe's times
// sit within 3 % of DeepEP's default configuration for the normal kernels
// and within 3.5 % (README: 2.7–3.3 %) for the low-latency pair.
func TestDeepEPH100Capture(t *testing.T) {
	dir := filepath.Join("..", "testdata", "gpu", "h100-deepep")
	parse := func(name string) []Measurement { return parseDeepEPFile(t, filepath.Join(dir, name)) }
	timeOf := func(ms []Measurement, test, side string) float64 {
		for _, m := range ms {
			if m.Test != test || m.Side != side || !m.OK || len(m.Samples) != 1 {
				continue
			}
			if s := m.Samples[0]; s.TimeUS != nil {
				return *s.TimeUS
			} else if s.LatAvgUS != nil { // DeepEP's low-latency lines: avg_t
				return *s.LatAvgUS
			}
		}
		t.Fatalf("no %q (%q) with a time", test, side)
		return 0
	}
	// worst is the slowest rank's time: the one every step waits for.
	worst := func(ms []Measurement, test string) float64 {
		w := 0.0
		for _, r := range []string{"rank 0", "rank 1", "rank 2", "rank 3"} {
			w = max(w, timeOf(ms, test, r))
		}
		return w
	}
	own := parse("deepep-intranode.txt")
	fp8, bf16 := parse("probe-fp8.txt"), parse("probe-bf16.txt")
	for _, c := range []struct {
		name       string
		probe, ref float64
	}{
		{"dispatch FP8", worst(fp8, "normal dispatch (FP8)"), timeOf(own, "normal dispatch (FP8) (default config)", "")},
		{"dispatch BF16", worst(bf16, "normal dispatch (BF16)"), timeOf(own, "normal dispatch (BF16) (default config)", "")},
		{"combine", worst(bf16, "normal combine (BF16)"), timeOf(own, "normal combine (default config)", "")},
	} {
		d := c.probe/c.ref - 1
		t.Logf("normal %s: probe %.2f µs, DeepEP %.2f µs (%+.2f %%)", c.name, c.probe, c.ref, d*100)
		if d > 0.03 || d < -0.03 {
			t.Errorf("normal %s: probe %.2f µs against DeepEP's %.2f (%+.2f %%)", c.name, c.probe, c.ref, d*100)
		}
	}
	ll := parse("deepep-low-latency.txt")
	for _, r := range []string{"rank 0", "rank 1", "rank 2", "rank 3"} {
		pair := timeOf(fp8, "low_latency dispatch (FP8)", r) + timeOf(fp8, "low_latency combine (BF16)", r)
		ref := timeOf(ll, "low_latency dispatch+combine", r)
		d := pair/ref - 1
		t.Logf("low latency %s: probe %.2f µs, DeepEP %.2f µs (%+.2f %%)", r, pair, ref, d*100)
		if d > 0.035 || d < -0.035 {
			t.Errorf("low latency %s: probe dispatch+combine %.2f µs against DeepEP's %.2f (%+.2f %%)", r, pair, ref, d*100)
		}
	}
}

// TestDeepEPH100PairCapture replays testdata/gpu/h100-deepep/pair (README
// there): the probe's low-latency dispatch and combine timed back to back
// in one window, against DeepEP's own "Dispatch + combine" of the same
// shape, alternated three times on 4×H100. Each run and rank is within
// 3 % (the bar issue 33 sets; the two timed apart were 2.7–3.3 % above),
// and so is the mean over the runs.
func TestDeepEPH100PairCapture(t *testing.T) {
	dir := filepath.Join("..", "testdata", "gpu", "h100-deepep", "pair")
	pairOf := func(name, test string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range parseDeepEPFile(t, filepath.Join(dir, name)) {
			if m.Test == test && m.OK && len(m.Samples) == 1 && m.Samples[0].LatAvgUS != nil {
				out[m.Side] = *m.Samples[0].LatAvgUS
			}
		}
		if len(out) != 4 {
			t.Fatalf("%s: %q on %d ranks, want 4: %v", name, test, len(out), out)
		}
		return out
	}
	var sumProbe, sumRef float64
	for _, run := range []string{"1", "2", "3"} {
		probe := pairOf("probe-ll-"+run+".txt", "low_latency dispatch+combine (FP8)")
		ref := pairOf("deepep-ll-"+run+".txt", "low_latency dispatch+combine")
		for _, r := range []string{"rank 0", "rank 1", "rank 2", "rank 3"} {
			d := probe[r]/ref[r] - 1
			sumProbe, sumRef = sumProbe+probe[r], sumRef+ref[r]
			t.Logf("run %s %s: probe %.2f µs, DeepEP %.2f µs (%+.2f %%)", run, r, probe[r], ref[r], d*100)
			if d > 0.03 || d < -0.03 {
				t.Errorf("run %s %s: probe's back-to-back pair %.2f µs against DeepEP's %.2f (%+.2f %%)", run, r, probe[r], ref[r], d*100)
			}
		}
	}
	if d := sumProbe/sumRef - 1; d > 0.01 || d < -0.01 {
		t.Errorf("mean over runs and ranks: probe %+.2f %% from DeepEP's, want within 1 %%", d*100)
	} else {
		t.Logf("mean over runs and ranks: probe %.2f µs, DeepEP %.2f µs (%+.2f %%)", sumProbe/12, sumRef/12, d*100)
	}
}

// parseDeepEPFile reads one captured output with ParseDeepEP.
func parseDeepEPFile(t *testing.T, path string) []Measurement {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := ParseDeepEP(f)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
