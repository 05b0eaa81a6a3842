package runner

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// The later calls of testdata/gpu/h100-kv-gpu2gpu (README there: run4-notify,
// run5-like-x4, run6-triage): nixlbench and the NIXL probe like for like
// (both send NIXL's notification with every post), UCCL over its tcp
// transport, and the one-host waterfall with the GPU copy.
const h100KV = "../testdata/gpu/h100-kv-gpu2gpu"

// reparsed loads a report and checks every passing result against its own
// raw output, re-parsed with the project's parser: the same sizes and
// figures. It returns the results by test, with GB/s per block size.
func reparsed(t *testing.T, run string) (map[string]schema.Result, map[string]map[int64]float64) {
	t.Helper()
	rep, err := schema.Load(filepath.Join(h100KV, run, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	byTest, gbps := map[string]schema.Result{}, map[string]map[int64]float64{}
	for _, r := range rep.Results {
		byTest[r.Test] = r
		if r.Verdict != schema.VerdictPass || r.Family != parsers.FamilyNixlbench {
			continue
		}
		m := parseRaw(t, run, r)
		if len(m.Samples) != len(r.Samples) {
			t.Fatalf("%s/%s: %d sizes re-parsed, report %d", run, r.Test, len(m.Samples), len(r.Samples))
		}
		gbps[r.Test] = map[int64]float64{}
		for i, s := range m.Samples {
			if s.Bytes != r.Samples[i].Bytes || *s.BWAvgBps != *r.Samples[i].BWAvgBps {
				t.Errorf("%s/%s size %d: %d B at %v b/s; report %d B at %v b/s", run, r.Test, i, s.Bytes, *s.BWAvgBps, r.Samples[i].Bytes, *r.Samples[i].BWAvgBps)
			}
			gbps[r.Test][s.Bytes] = *s.BWAvgBps / 8e9
		}
	}
	return byTest, gbps
}

// parseRaw re-parses a result's initiator output (its only one where it
// has one side) with the parser rdmabench used.
func parseRaw(t *testing.T, run string, r schema.Result) parsers.Measurement {
	t.Helper()
	raw := r.RawOutputs[0]
	for _, o := range r.RawOutputs {
		if strings.Contains(o, "initiator") {
			raw = o
		}
	}
	f, err := os.Open(filepath.Join(h100KV, run, raw))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	program := r.Program
	if program == "" {
		program = r.Tool
	}
	m, err := DefaultParse(program, f)
	if err != nil || !m.OK {
		t.Fatalf("%s/%s: parse %v ok=%v %s", run, r.Test, err, m.OK, m.Error)
	}
	return m
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// median of a few figures (the mean of the middle two for an even count).
func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

const (
	mib  = int64(1) << 20
	mib2 = 2 * mib
	mib4 = 4 * mib
	mib8 = 8 * mib
	mb16 = 16 * mib
)

// TestH100KVNotification replays run4-notify/rb-like: nixlbench posts a
// NIXL notification with every transfer; the probe --as-nixlbench does the
// same, the probe with --no-notify none, and reads ~1.6× faster at 1 MiB.
// The earlier "+72 % at 1 MiB" was that notification, not NIXL's speed.
func TestH100KVNotification(t *testing.T) {
	byTest, gbps := reparsed(t, "run4-notify/rb-like")
	want := map[string]float64{"nixlbench-1": 44.23, "nixlbench-2": 49.13, "probe-as-nixlbench-1": 39.93, "probe-as-nixlbench-2": 54.27, "probe-no-notify": 78.04}
	for test, w := range want {
		if g := gbps[test][mib]; !within(g, w, 0.005) {
			t.Errorf("%s at 1 MiB: %.2f GB/s, README says %.2f", test, g, w)
		}
		t.Logf("run4 %s: 1 MiB %.2f GB/s, 16 MiB %.2f GB/s", test, gbps[test][mib], gbps[test][mb16])
	}
	for test, flag := range map[string]string{"probe-as-nixlbench-1": "--as-nixlbench", "probe-no-notify": "--no-notify"} {
		if !strings.Contains(strings.Join(byTest[test].Commands, "\n"), flag) {
			t.Errorf("%s: no %s in its commands", test, flag)
		}
	}
	nb := median([]float64{gbps["nixlbench-1"][mib], gbps["nixlbench-2"][mib]})
	if r := gbps["probe-no-notify"][mib] / nb; r < 1.4 {
		t.Errorf("probe without notification at 1 MiB: %.2f× nixlbench, want > 1.4×", r)
	} else {
		t.Logf("run4 1 MiB: probe without notification %.2f× nixlbench (%.2f GB/s)", r, nb)
	}
}

// TestH100KVLikeForLike replays run5-like-x4/rb-like2: four alternations
// of nixlbench and the probe --as-nixlbench, 1008 transfers at every size.
// Like for like the probe is 12–20 % slower at 1–8 MiB (about 3 µs more
// per 1 MiB transfer: Python's calls into NIXL), within 5 % only at 16 MiB.
func TestH100KVLikeForLike(t *testing.T) {
	_, gbps := reparsed(t, "run5-like-x4/rb-like2")
	if len(gbps) != 8 {
		t.Fatalf("%d results passed, want 8", len(gbps))
	}
	want := map[int64]struct{ nb, probe, pct float64 }{
		mib: {47.97, 42.29, -11.8}, mib2: {100.06, 79.64, -20.4}, mib4: {167.05, 137.25, -17.8},
		mib8: {229.33, 200.98, -12.4}, mb16: {277.04, 266.32, -3.9},
	}
	for _, size := range []int64{mib, mib2, mib4, mib8, mb16} {
		var nbs, probes []float64
		for _, n := range []string{"1", "2", "3", "4"} {
			nbs = append(nbs, gbps["nixlbench-"+n][size])
			probes = append(probes, gbps["probe-as-nixlbench-"+n][size])
		}
		nb, pr := median(nbs), median(probes)
		d := 100 * (pr/nb - 1)
		t.Logf("%2d MiB: nixlbench %v → median %.2f; probe %v → median %.2f; %+.1f %%", size>>20, nbs, nb, probes, pr, d)
		w := want[size]
		if !within(nb, w.nb, 0.006) || !within(pr, w.probe, 0.006) || !within(d, w.pct, 0.05) {
			t.Errorf("%d MiB: medians %.3f / %.3f (%+.2f %%), README says %.2f / %.2f (%+.1f %%)", size>>20, nb, pr, d, w.nb, w.probe, w.pct)
		}
		if d < -25 || d > 0 {
			t.Errorf("%d MiB: probe %+.1f %% of nixlbench, want within 25 %% below", size>>20, d)
		}
		if within5 := d >= -5; within5 != (size == mb16) {
			t.Errorf("%d MiB: probe %+.1f %%: the 5 %% bar is met at 16 MiB only", size>>20, d)
		}
		if size == mib {
			extra := 1e6 * float64(mib) * (1/(pr*1e9) - 1/(nb*1e9))
			if extra < 2 || extra > 4 {
				t.Errorf("1 MiB: the probe spends %.2f µs more per transfer, README says about 3", extra)
			}
			t.Logf("1 MiB: %.2f µs more per transfer; run to run nixlbench %.0f %%", extra, 100*(spread(nbs)-1))
		}
	}
}

// TestH200KVBindingsLikeForLike replays run8-bindings-h200/rb-like3 (2×H200,
// nixlbench re-run beside the probe on that machine): the probe's timed
// loop now reads only the clock and, under --as-nixlbench, calls NIXL's
// bindings. Four alternations: the probe is 4.7–7.9 % below nixlbench at
// 1–16 MiB (run5 on H100: 3.9–20.4 %), 2.0 µs more per 1 MiB transfer
// (run5: 2.9); the 5 % bar is met at 2, 8 and 16 MiB, missed at 1 and 4.
// The probe posting through nixl_agent's wrappers with the same lean loop
// (two runs) falls among both: the binding calls are not told apart
// from run-to-run noise here.
func TestH200KVBindingsLikeForLike(t *testing.T) {
	byTest, gbps := reparsed(t, "run8-bindings-h200/rb-like3")
	if len(gbps) != 10 {
		t.Fatalf("%d results passed, want 10", len(gbps))
	}
	for test, calls := range map[string]string{"probe-as-nixlbench-1": "NIXL's bindings (postXferReq, getXferStatus)", "probe-wrapper-1": "nixl_agent (transfer, check_xfer_state)"} {
		if m := parseRaw(t, "run8-bindings-h200/rb-like3", byTest[test]); m.Info["timed_calls"] != calls {
			t.Errorf("%s: timed calls %q, want %q", test, m.Info["timed_calls"], calls)
		}
	}
	want := map[int64]struct{ nb, probe, pct float64 }{
		mib: {44.59, 41.06, -7.9}, mib2: {89.41, 85.19, -4.7}, mib4: {157.90, 149.14, -5.6},
		mib8: {219.75, 208.89, -4.9}, mb16: {282.50, 269.31, -4.7},
	}
	for _, size := range []int64{mib, mib2, mib4, mib8, mb16} {
		var nbs, probes, wrapped []float64
		for _, n := range []string{"1", "2", "3", "4"} {
			nbs = append(nbs, gbps["nixlbench-"+n][size])
			probes = append(probes, gbps["probe-as-nixlbench-"+n][size])
		}
		for _, n := range []string{"1", "2"} {
			wrapped = append(wrapped, gbps["probe-wrapper-"+n][size])
		}
		nb, pr := median(nbs), median(probes)
		d := 100 * (pr/nb - 1)
		t.Logf("%2d MiB: nixlbench %v → %.2f; probe %v → %.2f (%+.1f %%); through the wrappers %v", size>>20, nbs, nb, probes, pr, d, wrapped)
		w := want[size]
		if !within(nb, w.nb, 0.006) || !within(pr, w.probe, 0.006) || !within(d, w.pct, 0.05) {
			t.Errorf("%d MiB: medians %.3f / %.3f (%+.2f %%), README says %.2f / %.2f (%+.1f %%)", size>>20, nb, pr, d, w.nb, w.probe, w.pct)
		}
		if lo, hi := min(slices.Min(nbs), slices.Min(probes)), max(slices.Max(nbs), slices.Max(probes)); slices.Min(wrapped) < lo*0.9 || slices.Max(wrapped) > hi*1.1 {
			t.Errorf("%d MiB: the wrappers' runs %v fall outside the others' %.2f–%.2f", size>>20, wrapped, lo, hi)
		}
		if size == mib {
			extra := 1e6 * float64(mib) * (1/(pr*1e9) - 1/(nb*1e9))
			if !within(extra, 2.02, 0.02) {
				t.Errorf("1 MiB: the probe spends %.2f µs more per transfer, README says 2.02", extra)
			}
		}
	}
}

// TestH200KVValueLikeForLike replays run9-value-h200/rb-like5 (2×H200):
// nixlbench and the probe --as-nixlbench alternated eight times, the probe
// now with VRAM from the CUDA driver, nixlbench's 0xBEEF with every post
// and NIXL's status compared by its integer. The medians of the eight are
// within 5 % at every block from 1 MiB (the bar), −4.0 % at 1 MiB;
// the best of each within 5 % at every size. Both spread more from run to
// run at 1 MiB than the bar (the post alone takes 5.3–16 µs).
func TestH200KVValueLikeForLike(t *testing.T) {
	const run = "run9-value-h200/rb-like5"
	byTest, gbps := reparsed(t, run)
	if len(gbps) != 16 {
		t.Fatalf("%d results passed, want 16", len(gbps))
	}
	m := parseRaw(t, run, byTest["probe-as-nixlbench-1"])
	for key, want := range map[string]string{"timed_calls": "NIXL's bindings (postXferReq, getXferStatus)", "vram_alloc": "driver", "as_nixlbench": "nixlbench's", "no_notify": "1" /* the row's name then: 1 = a notification every post */} {
		if m.Info[key] != want {
			t.Errorf("probe config %s = %q, want %q", key, m.Info[key], want)
		}
	}
	want := map[int64]struct{ nb, probe, pct float64 }{
		mib: {56.41, 54.14, -4.0}, mib2: {103.99, 104.21, 0.2}, mib4: {164.64, 166.60, 1.2},
		mib8: {233.70, 232.15, -0.7}, mb16: {287.43, 285.55, -0.7},
	}
	for _, size := range []int64{64 << 10, 128 << 10, 256 << 10, 512 << 10, mib, mib2, mib4, mib8, mb16} {
		var nbs, probes []float64
		for n := 1; n <= 8; n++ {
			nbs = append(nbs, gbps[fmt.Sprintf("nixlbench-%d", n)][size])
			probes = append(probes, gbps[fmt.Sprintf("probe-as-nixlbench-%d", n)][size])
		}
		nb, pr := median(nbs), median(probes)
		d := 100 * (pr/nb - 1)
		best := 100 * (slices.Max(probes)/slices.Max(nbs) - 1)
		t.Logf("%5d KiB: nixlbench %.2f, probe %.2f (%+.1f %%); best %+.1f %%; spread %.0f %% / %.0f %%", size>>10, nb, pr, d, best, 100*(spread(nbs)-1), 100*(spread(probes)-1))
		if best < -5 || best > 5 {
			t.Errorf("%d KiB: the probe's best %+.1f %% of nixlbench's, want within 5 %%", size>>10, best)
		}
		w, ok := want[size]
		if !ok {
			continue
		}
		if !within(nb, w.nb, 0.006) || !within(pr, w.probe, 0.006) || !within(d, w.pct, 0.05) {
			t.Errorf("%d MiB: medians %.3f / %.3f (%+.2f %%), README says %.2f / %.2f (%+.1f %%)", size>>20, nb, pr, d, w.nb, w.probe, w.pct)
		}
		if d < -5 || d > 5 {
			t.Errorf("%d MiB: the probe's median %+.1f %% of nixlbench's, want within 5 %%", size>>20, d)
		}
	}
}

// TestH200KVLikeForLikeRepeats replays the three runs after run9, each
// nixlbench and the probe --as-nixlbench alternated eight times: run10
// (another machine, unpinned), run11 and run12 (one machine, three
// minutes apart, each side pinned to CPUs of its own: pools[].cpusets).
// The probe's median is within 5 % of nixlbench's at every size from
// 1 MiB in run9 and run11 only: run10 misses at 1–8 MiB, run12 at 1–8 MiB;
// 16 MiB holds in all four. The README gives the figures; the 5 % bar is
// not reliably met.
func TestH200KVLikeForLikeRepeats(t *testing.T) {
	want := map[string][5]float64{ // median against median, %, at 1, 2, 4, 8, 16 MiB
		"run10-repeat-h200/rb-like5":        {-28.3, -18.3, -10.1, -7.6, -4.4},
		"run11-pinned-h200/rb-like6":        {3.3, 0.9, -1.7, -2.3, -2.9},
		"run12-pinned-repeat-h200/rb-like6": {-11.8, -8.9, -8.7, -6.7, -4.6},
	}
	for run, pcts := range want {
		byTest, gbps := reparsed(t, run)
		if len(gbps) != 16 {
			t.Fatalf("%s: %d results passed, want 16", run, len(gbps))
		}
		m := parseRaw(t, run, byTest["probe-as-nixlbench-1"])
		if m.Info["script"] != "sha256:9303d85e9a8a" || m.Info["notification_per_request"] != "0xBEEF" || m.Info["vram_alloc"] != "driver" {
			t.Errorf("%s: probe %v", run, m.Info)
		}
		for i, size := range []int64{mib, mib2, mib4, mib8, mb16} {
			var nbs, probes []float64
			for n := 1; n <= 8; n++ {
				nbs = append(nbs, gbps[fmt.Sprintf("nixlbench-%d", n)][size])
				probes = append(probes, gbps[fmt.Sprintf("probe-as-nixlbench-%d", n)][size])
			}
			d := 100 * (median(probes)/median(nbs) - 1)
			if !within(d, pcts[i], 0.05) {
				t.Errorf("%s %d MiB: probe %+.2f %% of nixlbench, README says %+.1f %%", run, size>>20, d, pcts[i])
			}
		}
	}
	// Pinned: the plan gave each side the CPUs its pool named.
	for _, run := range []string{"run11-pinned-h200", "run12-pinned-repeat-h200"} {
		pl, err := os.ReadFile(filepath.Join(h100KV, run, "rb-like6", "plan.json"))
		if err != nil || !strings.Contains(string(pl), `"cpuSet": "8-9"`) || !strings.Contains(string(pl), `"cpuSet": "12-13"`) {
			t.Errorf("%s's plan: %v", run, err)
		}
	}
}

// spread is the largest over the smallest of a few figures.
func spread(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)-1] / s[0]
}

// TestH100UCCLCaptures replays UCCL on GPUs without an RDMA NIC
// (UCCL_P2P_TRANSPORT=tcp): nixlbench UCCL READ VRAM→VRAM works but each
// post takes about 9.5 ms whatever the size (1.69 GB/s at 16 MiB, UCX's
// cuda_ipc 292 GB/s beside it); the NIXL probe over UCCL segfaults in
// NIXL's create_backend (exit 139) in any Python process; nixlbench UCCL
// DRAM→DRAM dies on an ASIO timeout after the target's illegal memory access.
func TestH100UCCLCaptures(t *testing.T) {
	byTest, gbps := reparsed(t, "run4-notify/rb-uccl")
	ucx, uccl := byTest["nixlbench-ucx"], byTest["nixlbench-uccl"]
	if ucx.BestBytes != mb16 || !within(ucx.BestBps/8e9, 292.14, 0.005) || ucx.TransportLabel() != "GPU P2P" || !strings.HasPrefix(ucx.Transport.Detail, "cuda_ipc (") {
		t.Errorf("nixlbench UCX: %.2f GB/s at %d B over %s (%+v)", ucx.BestBps/8e9, ucx.BestBytes, ucx.TransportLabel(), ucx.Transport)
	}
	if uccl.Verdict != schema.VerdictPass || uccl.BestBytes != mb16 || !within(uccl.BestBps/8e9, 1.687, 0.0005) || uccl.TransportLabel() != "unknown" {
		t.Errorf("nixlbench UCCL: %s %.3f GB/s at %d B over %s", uccl.Verdict, uccl.BestBps/8e9, uccl.BestBytes, uccl.TransportLabel())
	}
	for _, s := range uccl.Samples {
		if *s.LatAvgUS < 9400 || *s.LatAvgUS > 10000 {
			t.Errorf("UCCL %d B: %.1f µs a transfer, want 9.4–10 ms at every size", s.Bytes, *s.LatAvgUS)
		}
	}
	t.Logf("16 MiB: UCX %.2f GB/s, UCCL %.3f GB/s (%.0f×)", gbps["nixlbench-ucx"][mb16], gbps["nixlbench-uccl"][mb16], gbps["nixlbench-ucx"][mb16]/gbps["nixlbench-uccl"][mb16])
	raw := parseFile(t, "run4-notify/raw-nb-UCCL-READ.txt", "nixlbench")
	if last := raw.Samples[len(raw.Samples)-1]; len(raw.Samples) != 9 || last.Bytes != mb16 || !within(*last.BWAvgBps/8e9, 1.690108, 1e-6) {
		t.Errorf("raw nixlbench UCCL: %+v", raw.Samples)
	}
	// The probe over UCCL: its target dies in NIXL's create_backend.
	for run, tests := range map[string][]string{
		"run4-notify/rb-uccl":      {"probe-uccl-as-nixlbench", "probe-uccl-as-vllm"},
		"run5-like-x4/rb-uccl2":    {"probe-uccl-default", "probe-uccl-in-python-0"},
		"run6-triage/rb-uccl-dram": {"probe-uccl-dram"},
	} {
		rs, _ := reparsed(t, run)
		for _, test := range tests {
			r := rs[test]
			if r.Verdict != schema.VerdictError || r.Backend != "UCCL" || !strings.Contains(r.Reason, "rdmabench-nixl exited with code 139 before it was ready") ||
				(run != "run4-notify/rb-uccl" && !strings.Contains(r.Reason, "in create_backend")) {
				t.Errorf("%s/%s: %s [%s] %q", run, test, r.Verdict, r.Backend, r.Reason)
			}
		}
	}
	for _, f := range []string{"uccl-notorch.txt", "uccl-torch.txt", "uccl-torch-cuda.txt"} {
		b, err := os.ReadFile(filepath.Join(h100KV, "run6-triage", f))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.HasPrefix(s, "Fatal Python error: Segmentation fault") || !strings.Contains(s, "_api.py\", line 398 in create_backend") || !strings.Contains(s, "rc=139") {
			t.Errorf("%s:\n%s", f, s)
		}
	}
	dram, _ := reparsed(t, "run6-triage/rb-uccl-dram")
	nb := dram["nixlbench-uccl-dram"]
	if nb.Verdict != schema.VerdictError || !strings.Contains(nb.Reason, "initiator: terminate called after throwing an instance of 'std::runtime_error'") {
		t.Errorf("nixlbench UCCL DRAM: %s %q", nb.Verdict, nb.Reason)
	}
	dir := filepath.Join(h100KV, "run6-triage/rb-uccl-dram/raw/nixlbench-uccl-dram_r0_decode-0_to_prefill-0")
	for file, text := range map[string]string{
		"0-0-decode-0-initiator.out": "terminate called after throwing an instance of 'std::runtime_error'\n  what():  ASIO Receive timeout",
		"0-0-prefill-0-target.out":   "[nccl] gpuEventQuery failed: an illegal memory access was encountered",
	} {
		if b, err := os.ReadFile(filepath.Join(dir, file)); err != nil || !strings.Contains(string(b), text) {
			t.Errorf("%s: %v, want %q", file, err, text)
		}
	}
}

// parseFile parses one capture under h100KV with the parser named.
func parseFile(t *testing.T, path, program string) parsers.Measurement {
	t.Helper()
	f, err := os.Open(filepath.Join(h100KV, path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := DefaultParse(program, f)
	if err != nil || !m.OK {
		t.Fatalf("%s: %v %+v", path, err, m)
	}
	return m
}

// TestH100OneHostWaterfall replays run5-like-x4/rb-single (issue 32: the
// gpu-kv-single-host scenario as it ran then). Rebuilt from its results,
// the waterfall carries the NVLink rate the results were judged against
// (18 × 26.562 GB/s = 478.1 GB/s a direction) and its layers: the GPU copy
// at 398.11 GB/s (83.3 %), ucx_perftest above NVLink (the figure that made
// the shipped scenario drop it), the NIXL probe (its best way, as nixlbench
// drives NIXL) beside nixlbench UCX, NCCL sendrecv.
func TestH100OneHostWaterfall(t *testing.T) {
	const run = "run5-like-x4/rb-single"
	rep, err := schema.Load(filepath.Join(h100KV, run, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	wfs := schema.BuildWaterfalls(rep.Results, rep.Run.LineRate)
	if len(wfs) != 1 || wfs[0].Pair != "decode-0 ↔ prefill-0" {
		t.Fatalf("waterfalls %+v", wfs)
	}
	const nvlink = 18 * 26.562e9 * 8
	if w := wfs[0]; !within(w.LineRateBps, nvlink, 1e3) {
		t.Errorf("waterfall line rate %v b/s, want NVLink's %v", w.LineRateBps, nvlink)
	}
	want := []struct {
		layer, test string
		gbps, pct   float64
	}{
		{"GPU copy", "gpu-copy", 398.11, 83.27}, {"ucx_perftest", "ucx-cuda-ipc", 1191.02, 249.1},
		{"NIXL probe UCX", "probe-as-nixlbench", 275.30, 57.58},
		{"nixlbench UCX", "nixlbench-read", 294.67, 61.63}, {"nccl sendrecv", "nccl-sendrecv", 361.08, 75.52},
	}
	if len(wfs[0].Layers) != len(want) {
		t.Fatalf("layers %+v", wfs[0].Layers)
	}
	for i, l := range wfs[0].Layers {
		w := want[i]
		if l.Layer != w.layer || l.Test != w.test || !within(l.BestBps/8e9, w.gbps, 0.005) || l.PctLineRate == nil || !within(*l.PctLineRate, w.pct, 0.05) {
			t.Errorf("layer %d: %s (%s) %.2f GB/s %v %% of NVLink; want %s (%s) %.2f GB/s %.2f %%", i, l.Layer, l.Test, l.BestBps/8e9, l.PctLineRate, w.layer, w.test, w.gbps, w.pct)
			continue
		}
		t.Logf("%-14s %-15s %8.2f GB/s  %6.1f %% of NVLink", l.Layer, l.Test, l.BestBps/8e9, *l.PctLineRate)
	}
	for _, r := range rep.Results {
		if r.Test == "gpu-copy" && (r.Efficiency == nil || !within(*r.Efficiency, *wfs[0].Layers[0].PctLineRate, 1e-9)) {
			t.Errorf("gpu-copy judged at %v %%, its layer at %v %%", r.Efficiency, *wfs[0].Layers[0].PctLineRate)
		}
		if r.Test == "probe-as-vllm" || r.Test == "probe-as-nixlbench" {
			t.Logf("%s: %.2f Tb/s at %d MiB", r.Test, r.BestBps/1e12, r.BestBytes>>20)
		}
	}
	// The same copy raw, with the probe's own parser: 1 MiB–1 GiB, busbw = algbw, nothing wrong, GPU peer-to-peer.
	cp := parseFile(t, "run5-like-x4/raw-gpu-copy.txt", "rdmabench-nccl")
	if cp.Test != "copy" || len(cp.Samples) != 11 || cp.Samples[0].Bytes != mib || cp.Samples[10].Bytes != 1<<30 ||
		cp.Transport == nil || cp.Transport.Kind != parsers.TransportP2P || cp.Info["copy_p2p"] != "direct" {
		t.Fatalf("raw copy: test %q, %d sizes, transport %+v, info %v", cp.Test, len(cp.Samples), cp.Transport, cp.Info)
	}
	for _, s := range cp.Samples {
		if s.Wrong == nil || *s.Wrong != 0 || *s.BusBWBps != *s.AlgBWBps {
			t.Errorf("raw copy %d B: wrong %v, busbw %v algbw %v", s.Bytes, s.Wrong, *s.BusBWBps, *s.AlgBWBps)
		}
	}
	if g := *cp.Samples[10].BusBWBps / 8e9; !within(g, 397.88, 1e-9) {
		t.Errorf("raw copy at 1 GiB: %.2f GB/s", g)
	}
}

// TestH100UCXPerftestCUDA replays run6-triage's ucx_perftest -m cuda on the
// GPU pair: UCX's own table picks cuda_ipc for the get, yet every 16 MiB
// figure (get, put, tag_bw) is above NVLink's 478 GB/s a direction, so it is
// not a transfer time; gpu-kv-single-host no longer runs it.
func TestH100UCXPerftestCUDA(t *testing.T) {
	const nvlink = 18 * 26.562e9
	for _, f := range []string{"ucx-get-m-cuda.txt", "ucx-get-m-cuda-cuda.txt", "ucx-get-tls-cudaipc.txt", "ucx-put-m-cuda.txt", "ucx-tagbw-m-cuda.txt"} {
		m := parseFile(t, "run6-triage/"+f, "ucx_perftest")
		s := m.Samples[len(m.Samples)-1]
		// The client prints no size; the server's banner does.
		server, err := os.ReadFile(filepath.Join(h100KV, "run6-triage", strings.TrimSuffix(f, ".txt")+"-server.txt"))
		if err != nil || !strings.Contains(string(server), "| Message size: 16777216 ") || *s.BWAvgBps/8 < 1.6*nvlink {
			t.Errorf("%s: %v, %.1f GB/s, want 16 MiB above NVLink's %.1f GB/s", f, err, *s.BWAvgBps/8e9, nvlink/1e9)
		}
		t.Logf("%s: %.0f GB/s at 16 MiB (%.1f× NVLink)", f, *s.BWAvgBps/8e9, *s.BWAvgBps/8/nvlink)
	}
	// The transport is the test's own RMA table's, read from its command
	// line as the runner reads it: not the tcp that emulates
	// ucx_perftest's host-to-GPU control writes beside it (before: "tcp"
	// for ucx-get-tls-cudaipc.txt).
	for f, argv := range map[string]string{
		"ucx-get-m-cuda.txt":      "-t ucp_get -m cuda",
		"ucx-get-m-cuda-cuda.txt": "-t ucp_get -m cuda,cuda",
		"ucx-get-tls-cudaipc.txt": "-t ucp_get -m cuda",
		"ucx-put-m-cuda.txt":      "-t ucp_put_bw -m cuda",
	} {
		m := parseFile(t, "run6-triage/"+f, "ucx_perftest")
		key := m.Transport.ForOpMemories(tools.UCXPerftestPath(strings.Fields("ucx_perftest 127.0.0.1 " + argv)))
		t.Logf("%s: %s: %s %q", f, key, m.Transport.Kind, m.Transport.Detail)
		if m.Transport.Kind != parsers.TransportP2P || !strings.HasPrefix(m.Transport.Detail, "cuda_ipc (") {
			t.Errorf("%s (%s): %s %q, want UCX's cuda_ipc", f, key, m.Transport.Kind, m.Transport.Detail)
		}
	}
	b, err := os.ReadFile(filepath.Join(h100KV, "run6-triage/ucx-get-m-cuda.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, "| remote memory read by ucp_get*(multi) into cuda/GPU1 from cuda/dev[0] |") || !strings.Contains(s, "| 0..inf | zero-copy   | cuda_ipc/cuda ") {
		t.Error("ucx-get-m-cuda.txt: UCX's table for the get is not cuda_ipc")
	}
}
