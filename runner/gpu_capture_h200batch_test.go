package runner

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// The calls of 2026-11-28 12:16–12:34 (testdata/gpu/h100-kv-gpu2gpu,
// run13–run16; README there): twelve alternations of the batch-1
// comparison, nixlbench's UCX parameters given to the probe, and 32
// descriptors a request, where the two programs part.

// tableRow is the initiator's table row for a block size: Avg Post and Avg
// Tx (µs a request), read from the raw output the report names.
func tableRow(t *testing.T, run string, r schema.Result, block int64) (post, tx float64) {
	t.Helper()
	for _, o := range r.RawOutputs {
		if !strings.Contains(o, "initiator") {
			continue
		}
		f, err := os.Open(filepath.Join(h100KV, run, o))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		prefix := strconv.FormatInt(block, 10) + " "
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), prefix) {
				continue
			}
			// Block, Batch, B/W, Avg Lat., Avg Prep, P99 Prep, Avg Post, P99 Post, Avg Tx, P99 Tx
			f := strings.Fields(sc.Text())
			if len(f) != 10 {
				t.Fatalf("%s/%s: row %q", run, r.Test, sc.Text())
			}
			post, _ = strconv.ParseFloat(f[6], 64)
			tx, _ = strconv.ParseFloat(f[8], 64)
			return post, tx
		}
	}
	t.Fatalf("%s/%s: no row for %d B", run, r.Test, block)
	return 0, 0
}

// alternated is, per block size, the probe's median against nixlbench's
// (%) and the median of the paired ratios (each probe run against the
// nixlbench run just before it, %), over tests named nb-N and probe-N.
func alternated(gbps map[string]map[int64]float64, nb, probe string, n int, size int64) (medians, paired float64) {
	var nbs, probes, ratios []float64
	for i := 1; i <= n; i++ {
		a, b := gbps[fmt.Sprintf("%s-%d", nb, i)][size], gbps[fmt.Sprintf("%s-%d", probe, i)][size]
		nbs, probes, ratios = append(nbs, a), append(probes, b), append(ratios, b/a)
	}
	return 100 * (median(probes)/median(nbs) - 1), 100 * (median(ratios) - 1)
}

// TestH200KVTwelveAlternations replays run13's batch-1 comparison (rb-like7):
// twelve alternations at 1–16 MiB, one UCX worker in the probe. The probe
// reads 4–19 % below nixlbench; the 5 % bar is missed at 1–8 MiB.
func TestH200KVTwelveAlternations(t *testing.T) {
	const run = "run13-twelve-and-batch32-h200/rb-like7"
	byTest, gbps := reparsed(t, run)
	if len(gbps) != 24 {
		t.Fatalf("%d results passed, want 24", len(gbps))
	}
	want := map[int64][2]float64{ // medians, paired ratios (%)
		mib: {-17.3, -15.3}, mib2: {-19.1, -13.4}, mib4: {-8.8, -7.7}, mib8: {-9.7, -5.4}, mb16: {-3.6, -3.2},
	}
	// The 1 MiB transfer's halves, means of the twelve runs' averages:
	// post 9.0 against 7.3 µs, Tx 13.9 against 12.3.
	for _, c := range []struct {
		prefix   string
		post, tx float64
	}{{"nixlbench", 7.29, 12.30}, {"probe-as-nixlbench", 8.95, 13.93}} {
		post, tx := meanHalves(t, run, byTest, c.prefix, 12)
		if !within(post, c.post, 0.01) || !within(tx, c.tx, 0.01) {
			t.Errorf("%s at 1 MiB: post %.2f, Tx %.2f µs; README says %.1f, %.1f", c.prefix, post, tx, c.post, c.tx)
		}
	}
	for size, w := range want {
		m, p := alternated(gbps, "nixlbench", "probe-as-nixlbench", 12, size)
		if !within(m, w[0], 0.05) || !within(p, w[1], 0.05) {
			t.Errorf("%d MiB: medians %+.2f %%, paired %+.2f %%; README says %+.1f / %+.1f", size>>20, m, p, w[0], w[1])
		}
	}
}

// TestH200KVTwoWorkers replays run15 (rb-like10): the probe given the UCX
// parameters nixlbench makes its backend with (num_workers=2,
// num_threads=0), since then --as-nixlbench's default. Batch 1, six
// alternations: +1.7 to −5.8 % (medians); batch 32 as run14.
func TestH200KVTwoWorkers(t *testing.T) {
	const run = "run15-two-workers-h200/rb-like10"
	byTest, gbps := reparsed(t, run)
	if len(gbps) != 18 {
		t.Fatalf("%d results passed, want 18", len(gbps))
	}
	if got := parseRaw(t, run, byTest["probe-2w-b1-1"]).Info["backend_param"]; got != "num_workers=2,num_threads=0" {
		t.Errorf("probe backend parameters %q", got)
	}
	want := map[int64]float64{mib: 1.7, mib2: 3.1, mib4: -5.8, mib8: -3.7, mb16: -4.7}
	for size, w := range want {
		if m, _ := alternated(gbps, "nixlbench-b1", "probe-2w-b1", 6, size); !within(m, w, 0.05) {
			t.Errorf("%d MiB: medians %+.2f %%, README says %+.1f", size>>20, m, w)
		}
	}
	if m, _ := alternated(gbps, "nixlbench-b32", "probe-2w-b32", 3, mib); !within(m, 89.9, 0.05) {
		t.Errorf("batch 32, 1 MiB: %+.2f %%, README says +89.9", m)
	}
}

// TestH200KVBatch32 replays 32 descriptors a request (run13 rb-like8: the
// probe's two regions of 16 blocks; run14 rb-like9: one region of 32, as
// nixlbench lays them out, and two regions twice; run15's three; run16's).
// The probe reads 1.85–1.9× nixlbench at 1 MiB and 8–9 % more at 16 MiB:
// a 1 MiB × 32 request takes nixlbench 198–210 µs, most of it in a post of
// 83–182 µs (2.6–5.7 µs a descriptor), the probe 100–111 µs (post 7–16).
// Run16 (an experiment build) posted from a thread with no CUDA context
// current: as fast, so UCX's context push is not the cause.
func TestH200KVBatch32(t *testing.T) {
	const (
		run13 = "run13-twelve-and-batch32-h200/rb-like8"
		run14 = "run14-batch32-one-region-h200/rb-like9"
		run15 = "run15-two-workers-h200/rb-like10"
		run16 = "run16-post-thread-h200/rb-like11"
	)
	sizes := []int64{mib, mib2, mib4, mib8, mb16}
	for _, c := range []struct {
		run, nb, probe string
		n              int
		want           [5]float64 // medians at 1–16 MiB, %
	}{
		{run13, "nixlbench", "probe-as-nixlbench", 6, [5]float64{84.5, 53.4, 29.3, 16.2, 8.8}},
		{run14, "nixlbench", "probe-as-nixlbench", 6, [5]float64{90.1, 55.5, 30.7, 16.0, 8.5}},
		{run15, "nixlbench-b32", "probe-2w-b32", 3, [5]float64{89.9, 54.6, 30.4, 16.7, 9.1}},
	} {
		_, gbps := reparsed(t, c.run)
		for i, size := range sizes {
			if m, _ := alternated(gbps, c.nb, c.probe, c.n, size); !within(m, c.want[i], 0.05) {
				t.Errorf("%s %d MiB: medians %+.2f %%, README says %+.1f", c.run, size>>20, m, c.want[i])
			}
		}
	}
	if got := parseRaw(t, run14, mustResult(t, run14, "probe-as-nixlbench-1")).Info; got["regions"] != "1" || got["blocks"] != "32" {
		t.Errorf("run14's probe layout: regions %q, blocks %q", got["regions"], got["blocks"])
	}

	// Every batch-32 run of the four calls: GB/s at 1 and 16 MiB, and the
	// time of a 1 MiB request (post + Tx) and its post.
	type run struct{ dir, test string }
	var nbs, probes []run
	for i := 1; i <= 6; i++ {
		nbs = append(nbs, run{run13, fmt.Sprintf("nixlbench-%d", i)}, run{run14, fmt.Sprintf("nixlbench-%d", i)})
		probes = append(probes, run{run13, fmt.Sprintf("probe-as-nixlbench-%d", i)}, run{run14, fmt.Sprintf("probe-as-nixlbench-%d", i)})
	}
	for i := 1; i <= 3; i++ {
		nbs = append(nbs, run{run15, fmt.Sprintf("nixlbench-b32-%d", i)})
		probes = append(probes, run{run15, fmt.Sprintf("probe-2w-b32-%d", i)})
	}
	nbs = append(nbs, run{run16 + "a", "nixlbench-1"}, run{run16 + "c", "nixlbench-2"})
	probes = append(probes, run{run14, "probe-two-regions-1"}, run{run14, "probe-two-regions-2"}, run{run16 + "a", "probe-as-nixlbench-1"},
		run{run16 + "b", "probe-post-thread-1"}, run{run16 + "b", "probe-post-thread-2"})
	for _, side := range []struct {
		name                 string
		runs                 []run
		gb1, gb16, req, post [2]float64 // ranges: GB/s at 1 and 16 MiB, µs a 1 MiB request, µs its post
	}{
		{"nixlbench", nbs, [2]float64{159.5, 169.5}, [2]float64{351, 359}, [2]float64{198, 210}, [2]float64{83, 182.5}},
		{"probe", probes, [2]float64{302.5, 335}, [2]float64{379.5, 390.5}, [2]float64{100, 111}, [2]float64{7, 16}},
	} {
		for _, r := range side.runs {
			res := mustResult(t, r.dir, r.test)
			gb := map[int64]float64{}
			for _, s := range res.Samples {
				gb[s.Bytes] = *s.BWAvgBps / 8e9
			}
			post, tx := tableRow(t, r.dir, res, mib)
			for _, chk := range []struct {
				what  string
				got   float64
				limit [2]float64
			}{{"GB/s at 1 MiB", gb[mib], side.gb1}, {"GB/s at 16 MiB", gb[mb16], side.gb16}, {"µs a 1 MiB request", post + tx, side.req}, {"µs to post it", post, side.post}} {
				if chk.got < chk.limit[0] || chk.got > chk.limit[1] {
					t.Errorf("%s %s/%s: %.1f %s, README says %v", side.name, r.dir, r.test, chk.got, chk.what, chk.limit)
				}
			}
		}
	}
}

func results(t *testing.T, run string) map[string]schema.Result {
	t.Helper()
	rep, err := schema.Load(filepath.Join(h100KV, run, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]schema.Result{}
	for _, r := range rep.Results {
		out[r.Test] = r
	}
	return out
}

func mustResult(t *testing.T, run, test string) schema.Result {
	t.Helper()
	r, ok := results(t, run)[test]
	if !ok {
		t.Fatalf("%s: no result %s", run, test)
	}
	return r
}
