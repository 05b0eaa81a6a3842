package html

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// A year of nightly runs of the 64-endpoint all-to-all (fixture.BigMatrix:
// 4,032 pairs × 12 sizes, about 11 MB of report.json each): 365 real
// report.json files. From night 250 one link (ep-5 → ep-9) runs 30% slower
// and the NIC firmware changes the same night. Building the files takes a
// while, so they are kept in $TMPDIR/rdmabench-history-bench-v1 between
// runs (4.1 GB of report.json and, once a history ran, 0.15 GB of
// history.idx; the benchmark logs where; delete it to rebuild or to free
// the disk).
const benchNights = 365

func historyBenchDir(b *testing.B) string {
	dir := filepath.Join(os.TempDir(), "rdmabench-history-bench-v1")
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	start := time.Now()
	workers := runtime.GOMAXPROCS(0)
	nights := make(chan int)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := fixture.BigMatrix() // each worker its own copy: samples are pointers
			var base [][]float64
			for _, res := range r.Results {
				var xs []float64
				for _, s := range res.Samples {
					xs = append(xs, *s.BWAvgBps)
				}
				base = append(base, xs)
			}
			for n := range nights {
				if err := writeNight(dir, r, base, n); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	for n := range benchNights {
		nights <- n
	}
	close(nights)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	_ = os.WriteFile(filepath.Join(dir, "complete"), nil, 0o644)
	b.Logf("wrote %d runs to %s in %v", benchNights, dir, time.Since(start))
	return dir
}

func writeNight(dir string, r *schema.Report, base [][]float64, night int) error {
	rng := rand.New(rand.NewPCG(uint64(night), 11))
	r.Run.ID = fmt.Sprintf("fabric-a2a-64-%03d", night)
	r.Run.Start = time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, night)
	r.Run.Fingerprint[schema.FingerprintNICFirmware] = "28.43.1014"
	if night >= 250 {
		r.Run.Fingerprint[schema.FingerprintNICFirmware] = "28.44.1000"
	}
	for i := range r.Results {
		res := &r.Results[i]
		slow := night >= 250 && res.From == "ep-5" && res.To == "ep-9"
		for j := range res.Samples {
			v := base[i][j] * (1 + 0.008*(2*rng.Float64()-1))
			if slow {
				v *= 0.7
			}
			*res.Samples[j].BWAvgBps = fixture.Round(v, 0)
		}
	}
	p := filepath.Join(dir, r.Run.ID, "report.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	// As schema.Save writes it (indented), with the faster encoder.
	if err := json.MarshalWrite(f, r, jsontext.WithIndent("  ")); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// BenchmarkHistoryYear64 is `rdmabench history` over that year: load and
// group every run, then render the terminal table and the HTML. cold: no
// history.idx yet, every report.json is decoded (and the indexes written,
// as history does); warm: every run has a current history.idx.
func BenchmarkHistoryYear64(b *testing.B) {
	dir := historyBenchDir(b)
	where := fmt.Sprintf("data set: %s, %d runs, %.1f GB (kept between runs; rm -rf it to free the disk)", dir, benchNights, float64(treeSize(dir))/1e9)
	b.Run("cold", func(b *testing.B) {
		b.Log(where)
		benchHistory(b, dir, func() { removeIndexes(b, dir) })
	})
	b.Run("warm", func(b *testing.B) {
		b.Log(where)
		if n := len(indexes(b, dir)); n != benchNights {
			history.Load([]string{dir}) // writes them
		}
		benchHistory(b, dir, func() {})
		b.Logf("indexes: %.0f MB", float64(indexSize(b, dir))/1e6)
	})
}

func benchHistory(b *testing.B, dir string, prepare func()) {
	var h *history.History
	var load, render time.Duration
	for b.Loop() {
		b.StopTimer()
		prepare()
		runtime.GC()
		b.StartTimer()
		t0 := time.Now()
		h = history.Load([]string{dir})
		t1 := time.Now()
		if err := history.WriteTable(io.Discard, h, history.MaxTableRows); err != nil {
			b.Fatal(err)
		}
		if err := WriteHistory(io.Discard, h, HistoryOptions{Dir: dir}); err != nil {
			b.Fatal(err)
		}
		load, render = load+t1.Sub(t0), render+time.Since(t1)
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(h)
	b.ReportMetric(load.Seconds()/float64(b.N), "s-load+group")
	b.ReportMetric(render.Seconds()/float64(b.N), "s-render")
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "MB-heap-held")
	checkYear(b, h)
}

// checkYear: every run and series is there, and the slow link is found,
// at the night it slowed down, at every size it is not latency bound at.
func checkYear(b *testing.B, h *history.History) {
	if len(h.Runs) != benchNights || len(h.Series) != 4032*12 || len(h.Warnings) != 0 {
		b.Fatalf("%d runs, %d series, warnings %v", len(h.Runs), len(h.Series), h.Warnings)
	}
	top := h.Series[0]
	if top.Pair != "ep-5 → ep-9" || top.Step == nil || top.Step.RunID != "fabric-a2a-64-250" {
		b.Errorf("worst series %s, step %+v", top.Name(), top.Step)
	}
	slow := 0
	for _, s := range h.Series[:h.SteppedDown()] {
		if s.Pair == "ep-5 → ep-9" && s.Step.RunID == "fabric-a2a-64-250" {
			slow++
		} else {
			b.Logf("also stepped down: %s %+v (noise %.3g%%)", s.Name(), s.Step, 100*s.Noise/s.Median)
		}
	}
	if slow != 12 || len(h.Changes) != 1 {
		b.Errorf("%d of the slow link's 12 sizes stepped down, %d changes", slow, len(h.Changes))
		for _, s := range h.Series {
			if s.Pair == "ep-5 → ep-9" && s.Step == nil {
				b.Logf("not stepped: %s latest %g median %g noise %g", s.Name(), s.Latest, s.Median, s.Noise)
			}
		}
	}
}

func removeIndexes(b *testing.B, dir string) {
	for _, p := range indexes(b, dir) {
		if err := os.Remove(p); err != nil {
			b.Fatal(err)
		}
	}
}

func indexSize(b *testing.B, dir string) int64 {
	var n int64
	for _, p := range indexes(b, dir) {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// indexes lists the history.idx files under dir.
func indexes(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() == history.IndexFile {
			out = append(out, p)
		}
		return nil
	})
	return out
}
