package runner

import "testing"

// The calls of 2026-11-28 14:13–14:22 (testdata/gpu/h100-kv-gpu2gpu,
// run17 and run18; README there): the NIXL probe's native initiator
// (rdmabench-nixl --native: nixlbench's loop in Go through the image's
// libnixl_capi.so) against nixlbench, batch 1, READ GPU 1 ← GPU 0.

// TestH200KVNativeInitiator replays run17 (rb-like12: nixlbench, the native
// initiator and the Python probe --as-nixlbench, eight alternations, 64 KiB
// to 16 MiB) and run18 (rb-like13: nixlbench and the native initiator,
// sixteen alternations, 1–16 MiB). The native loop is within 5 % of
// nixlbench at 4–16 MiB in both; at 1–2 MiB it is not, in either.
func TestH200KVNativeInitiator(t *testing.T) {
	const run17, run18 = "run17-native-h200/rb-like12", "run18-native-paired-h200/rb-like13"
	byTest, gbps := reparsed(t, run17)
	if len(gbps) != 24 {
		t.Fatalf("run17: %d results passed, want 24", len(gbps))
	}
	// The banner, though UCX's buffered table ran into it in these
	// captures (the initiator flushes C's stdout first since).
	info := parseRaw(t, run17, byTest["probe-native-1"]).Info
	if info["loop"] != "native" || info["nixl_capi"] != "/root/nb/prefix/lib/libnixl_capi.so" || info["backend_param"] != "num_workers=2,num_threads=0" {
		t.Errorf("run17 native banner and config: %v", info)
	}
	type figures map[int64][2]float64 // medians, paired ratios (%)
	for _, c := range []struct {
		run, probe string
		n          int
		want       figures
	}{
		{run17, "probe-native", 8, figures{mib: {-10.4, -9.1}, mib2: {-8.9, -5.6}, mib4: {-5.5, -4.2}, mib8: {-0.8, -1.7}, mb16: {-2.7, -2.6}}},
		{run17, "probe-as-nixlbench", 8, figures{mib: {-11.6, -12.1}, mib2: {-11.0, -11.9}, mib4: {-10.7, -8.8}, mib8: {-5.1, -5.0}, mb16: {-4.3, -3.8}}},
		{run18, "probe-native", 16, figures{mib: {-3.0, -5.7}, mib2: {-9.2, -2.0}, mib4: {-0.9, -1.1}, mib8: {-4.1, -1.3}, mb16: {-1.1, -1.5}}},
	} {
		_, gbps := reparsed(t, c.run)
		for size, w := range c.want {
			m, p := alternated(gbps, "nixlbench", c.probe, c.n, size)
			if !within(m, w[0], 0.05) || !within(p, w[1], 0.05) {
				t.Errorf("%s %s %d MiB: medians %+.2f %%, paired %+.2f %%; README says %+.1f / %+.1f", c.run, c.probe, size>>20, m, p, w[0], w[1])
			}
		}
	}
}
