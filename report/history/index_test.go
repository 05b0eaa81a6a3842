package history

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// variedRuns is a generated set of runs: 20 nights of the small nightly
// scenario, each with its write-bw measured twice (compare's "#2" key),
// and the two full compare fixtures (every tool: collectives, NIXL
// backends, latencies, statistics over repetitions) as another scenario.
func variedRuns() ([]string, []*schema.Report) {
	paths, reps := fixture.Nightly(20)
	for i, r := range reps {
		again := r.Results[0]
		v := 380e9 + float64(i%3)*1e9
		again.Samples = append(again.Samples[:0:0], again.Samples[1])
		again.Samples[0].BWAvgBps = &v
		r.Results = append(r.Results, again)
		r.Summary = schema.CountVerdicts(r.Results)
	}
	base, cur := fixture.BaseAndCurrent()
	base.Run.Start = reps[5].Run.Start.Add(time.Hour)
	cur.Run.Start = reps[6].Run.Start.Add(time.Hour)
	reps = append(reps[:6], append([]*schema.Report{base}, append(reps[6:7], append([]*schema.Report{cur}, reps[7:]...)...)...)...)
	paths = append(paths[:6], append([]string{"fixtures/base/report.json"}, append(paths[6:7], append([]string{"fixtures/cur/report.json"}, paths[7:]...)...)...)...)
	return paths, reps
}

func historyJSON(t *testing.T, h *History) []byte {
	t.Helper()
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func indexes(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() == IndexFile {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// A history reads the same from report.json (cold: no index yet), from
// the indexes that pass wrote (warm), and from the reports in memory.
func TestHistoryIndexSameHistory(t *testing.T) {
	dir := t.TempDir()
	paths, reps := variedRuns()
	fixture.WriteRuns(t, dir, paths, reps)
	if got := indexes(t, dir); len(got) != 0 {
		t.Fatalf("indexes before any history: %v", got)
	}
	cold := Load([]string{dir})
	if len(cold.Runs) != 22 || len(cold.Warnings) != 0 || cold.Series[0].Step == nil {
		t.Fatalf("%d runs, warnings %q", len(cold.Runs), cold.Warnings)
	}
	repeat := false
	for _, s := range cold.Series {
		repeat = repeat || s.Test == "write-bw" && s.Scenario == "nightly" && s.Values[0] == 380e9
	}
	if !repeat {
		t.Error("the second write-bw of each night is not a series of its own")
	}
	if got := indexes(t, dir); len(got) != 22 {
		t.Fatalf("cold history wrote %d indexes, want 22", len(got))
	}
	// Prove the warm pass reads the indexes: report.json becomes garbage
	// of the same size and time, which only an index can stand in for.
	for _, p := range paths {
		spoil(t, filepath.Join(dir, p))
	}
	warm := Load([]string{dir})
	if !bytes.Equal(historyJSON(t, cold), historyJSON(t, warm)) {
		t.Errorf("history differs with the indexes:\n%s", firstDiff(historyJSON(t, cold), historyJSON(t, warm)))
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		abs[i] = filepath.Join(dir, p)
	}
	mem := Build(abs, reps)
	if !bytes.Equal(historyJSON(t, cold), historyJSON(t, mem)) {
		t.Errorf("history from report.json differs from the reports in memory:\n%s", firstDiff(historyJSON(t, cold), historyJSON(t, mem)))
	}
}

// spoil overwrites a file with as many spaces, keeping its time.
func spoil(t *testing.T, p string) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Repeat([]byte{' '}, int(st.Size())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %s\n    vs: %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(la), len(lb))
}

// A replaced report.json (another size or time) outdates its index: the
// history reads the new report and the index is written again; a corrupt
// or unwritable index is read around, never an error.
func TestHistoryIndexStaleCorruptUnwritable(t *testing.T) {
	dir := t.TempDir()
	paths, reps := fixture.Nightly(20)
	fixture.WriteRuns(t, dir, paths, reps)
	Load([]string{dir}) // writes the indexes

	// Night 19 re-measured and report.json replaced: same size, the figure
	// changes; the time differs.
	r := fixture.NightlyRun(19)
	*r.Results[0].Samples[1].BWAvgBps = 304e9
	p19 := filepath.Join(dir, paths[19])
	time.Sleep(10 * time.Millisecond)
	if err := schema.Save(p19, r); err != nil {
		t.Fatal(err)
	}
	// Night 18's index is cut short; night 17's cannot be written.
	idx18 := filepath.Join(dir, "runs", "nightly-18", IndexFile)
	data, _ := os.ReadFile(idx18)
	_ = os.WriteFile(idx18, data[:len(data)-5], 0o644)
	idx17 := filepath.Join(dir, "runs", "nightly-17", IndexFile)
	os.Remove(idx17)
	_ = os.Mkdir(idx17, 0o755) // a folder where the file should be: read and rename fail

	h := Load([]string{dir})
	if len(h.Warnings) != 0 || len(h.Runs) != 20 {
		t.Fatalf("%d runs, warnings %q", len(h.Runs), h.Warnings)
	}
	if s := seriesNamed(t, h, "write-bw", 1<<20); s.Latest != 304e9 {
		t.Errorf("latest %g: the stale index was read, not the new report.json", s.Latest)
	}
	want := historyJSON(t, Build(absPaths(dir, paths), append(reps[:19:19], r)))
	if got := historyJSON(t, h); !bytes.Equal(got, want) {
		t.Errorf("history differs from the reports:\n%s", firstDiff(got, want))
	}
	st, _ := os.Stat(p19)
	if hd, err := readIndexHead(p19, st); err != nil || hd.Run.ID != "nightly-19" {
		t.Errorf("night 19's index was not written again: %v", err)
	}
	if _, err := readIndex(filepath.Join(dir, paths[18]), mustStat(t, filepath.Join(dir, paths[18]))); err != nil {
		t.Errorf("night 18's cut index was not written again: %v", err)
	}
}

func absPaths(dir string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Join(dir, p)
	}
	return out
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Every byte of an index body may be wrong: decoding says so, never panics.
func FuzzHistoryIndexBody(f *testing.F) {
	_, reps := variedRuns()
	f.Add(encodeIndexBody(IndexOf(reps[0])))
	f.Add(encodeIndexBody(IndexOf(reps[6])))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		var idx RunIndex
		if err := decodeIndexBody(body, &idx); err == nil {
			if again := encodeIndexBody(&idx); len(again) > len(body) {
				t.Errorf("decoded %d bytes into an index of %d", len(body), len(again))
			}
		}
	})
}

// median by selection is the median of the sorted figures, ties and all.
func TestMedianSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(1 + n/3)) // many ties
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		want := 0.0
		if n > 0 {
			want = sorted[n/2]
			if n%2 == 0 {
				want = (sorted[n/2-1] + sorted[n/2]) / 2
			}
		}
		if got := median(xs); got != want {
			t.Fatalf("n=%d: median %g, sorted says %g", n, got, want)
		}
	}
}

// A low pair's rerun is no point of a history (it exists only on the
// nights the pair was low), and LoadSlim keeps the retest number.
func TestHistoryIndexSkipsRetests(t *testing.T) {
	r := fixture.Full(1)
	before := len(IndexOf(r).Results)
	for i := range r.Results {
		if r.Results[i].Test == "fabric-a2a" {
			re := r.Results[i]
			re.Retest = 1
			r.Results = append(r.Results, re)
			break
		}
	}
	p := filepath.Join(t.TempDir(), "report.json")
	if err := schema.Save(p, r); err != nil {
		t.Fatal(err)
	}
	slim, err := LoadSlim(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := slim.Results[len(slim.Results)-1].Retest; got != 1 {
		t.Fatalf("LoadSlim retest = %d, want 1", got)
	}
	if got := len(IndexOf(slim).Results); got != before {
		t.Fatalf("index has %d results, want %d (the retest left out)", got, before)
	}
}

// A body whose first result claims more sizes than figures left is
// corrupt, and is refused (the figures buffer is bounded by the bytes left).
func TestHistoryIndexBodyHugeSizes(t *testing.T) {
	var b []byte
	b = binary.AppendUvarint(b, 1) // one string
	b = binary.AppendUvarint(b, 0) // ""
	b = binary.AppendUvarint(b, 1) // one size list
	b = binary.AppendUvarint(b, 60)
	for range 60 {
		b = binary.AppendVarint(b, 1)
	}
	b = binary.AppendUvarint(b, 2) // two results, the first too short
	for range 7 {
		b = binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, 0)
	b = append(b, make([]byte, 16)...)
	b = binary.AppendUvarint(b, 0)
	b = append(b, make([]byte, 40)...)
	if err := decodeIndexBody(b, &RunIndex{}); err == nil {
		t.Fatal("corrupt body decoded")
	}
}

// LoadSlim keeps what the EP budget is built from (each DeepEP sample's
// phase, rank and tokens, the MoE layers), so that an automatic baseline
// compares a DeepEP test by it as a full report.json would.
func TestLoadSlimKeepsTheEPBudget(t *testing.T) {
	r := fixture.DeepEP()
	p := filepath.Join(t.TempDir(), "report.json")
	if err := schema.Save(p, r); err != nil {
		t.Fatal(err)
	}
	slim, err := LoadSlim(p)
	if err != nil {
		t.Fatal(err)
	}
	got, want := schema.BuildEPBudget(slim.Results), r.EPBudget
	if got == nil || len(got.Rows) != len(want.Rows) {
		t.Fatalf("slim budget %+v, want %+v", got, want)
	}
	for i := range want.Rows {
		if got.Rows[i] != want.Rows[i] {
			t.Errorf("row %d: %+v, want %+v", i, got.Rows[i], want.Rows[i])
		}
	}
}
