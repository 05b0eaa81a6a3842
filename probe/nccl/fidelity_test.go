package nccl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
)

// TestCapturedH100Fidelity replays the probe's real run against nccl-tests
// on two H100s (testdata/gpu/h100-2gpu-probe/README.md): the parser reads
// both, the probe is named as the program that measured, and at 256 MiB
// and above its bus bandwidth is within 1 % of nccl-tests' with the same
// NCCL.
func TestCapturedH100Fidelity(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "gpu", "h100-2gpu-probe")
	for _, c := range []string{"all_reduce", "alltoall", "sendrecv"} {
		raw := parseFile(t, filepath.Join(dir, "raw-"+c+"-2-1.txt"), "nccl-tests")
		probe := parseFile(t, filepath.Join(dir, "probe-"+c+"-2-2.txt"), Program)
		if probe.Tool != Program || probe.Test != c || probe.Transport == nil || probe.Transport.Kind != "p2p" {
			t.Errorf("%s: probe read as tool %q test %q transport %+v", c, probe.Tool, probe.Test, probe.Transport)
		}
		want := map[int64]float64{}
		for _, s := range raw.Samples {
			if s.BusBWBps != nil {
				want[s.Bytes] = *s.BusBWBps
			}
		}
		compared := 0
		for _, s := range probe.Samples {
			if s.Bytes < 256<<20 || s.BusBWBps == nil {
				continue
			}
			w, ok := want[s.Bytes]
			if !ok {
				t.Errorf("%s %d B: nccl-tests has no row", c, s.Bytes)
				continue
			}
			if d := *s.BusBWBps/w - 1; d > 0.01 || d < -0.01 {
				t.Errorf("%s %d B: probe busbw %.2f GB/s, nccl-tests %.2f GB/s (%+.2f %%)", c, s.Bytes, *s.BusBWBps/8e9, w/8e9, d*100)
			}
			if s.Wrong == nil || *s.Wrong != 0 {
				t.Errorf("%s %d B: wrong elements %v", c, s.Bytes, s.Wrong)
			}
			compared++
		}
		if compared != 5 {
			t.Errorf("%s: compared %d sizes of 256 MiB–4 GiB, want 5", c, compared)
		}
	}
}

func parseFile(t *testing.T, path, tool string) parsers.Measurement {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := parsers.Parse(tool, f)
	if err != nil || len(ms) != 1 || !ms[0].OK {
		t.Fatalf("%s: %v %+v", path, err, ms)
	}
	return ms[0]
}
