package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/schema"
)

// nightRun is one night of a one-test scenario: write-bw a-0 → b-0 at
// 1 MiB, gbps Gb/s, with the given verdict and firmware.
func nightRun(night int, gbps float64, verdict, firmware string) *schema.Report {
	v := gbps * 1e9
	r := &schema.Report{SchemaVersion: schema.Version, Run: schema.RunMeta{
		ID: fmt.Sprintf("nightly-%02d", night), Scenario: "nightly", ScenarioHash: "sha256:abc",
		Start:       time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).Add(time.Duration(night) * 24 * time.Hour),
		Fingerprint: map[string]string{schema.FingerprintNICFirmware: firmware},
	}}
	r.Results = []schema.Result{{Test: "write-bw", Tool: "ib_write_bw", Family: parsers.FamilyPerftest, Metric: parsers.MetricBandwidth, From: "a-0", To: "b-0", Verdict: verdict,
		Samples: []parsers.Sample{{Bytes: 1 << 20, BWAvgBps: &v}}}}
	r.Summary = schema.CountVerdicts(r.Results)
	return r
}

func saveRun(t *testing.T, dir string, r *schema.Report) string {
	t.Helper()
	p := filepath.Join(dir, r.Run.ID, "report.json")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	if err := schema.Save(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHistoryCmd(t *testing.T) {
	dir := t.TempDir()
	for i := range 12 {
		gbps := 390.0 + float64(i%2)
		if i >= 6 {
			gbps = 300 + float64(i%2)
		}
		saveRun(t, dir, nightRun(i, gbps, schema.VerdictPass, "28.43.1014"))
	}
	_ = os.WriteFile(filepath.Join(dir, "nightly-03", "report.json.bak"), []byte("x"), 0o644)
	_ = os.MkdirAll(filepath.Join(dir, "junk"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "junk", "report.json"), []byte("{not json"), 0o644)
	html := filepath.Join(t.TempDir(), "history.html")

	code, out, stderr := runInTempDir(t, "history", dir, "--html", html)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"12 runs from 2026-01-01 (nightly-00) to 2026-01-12 (nightly-11), 1 series, 1 stepped down",
		"2026-01-07 (nightly-06) -23.0%: 390.50 Gb/s → 300.50 Gb/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "warning: "+filepath.Join(dir, "junk", "report.json")+": not a report.json") {
		t.Errorf("corrupt file not named: %s", stderr)
	}
	if st, err := os.Stat(html); err != nil || st.Size() < 100_000 {
		t.Errorf("html: %v", err)
	}

	code, out, _ = runInTempDir(t, "history", dir, "-o", "json")
	var h history.History
	if err := json.Unmarshal([]byte(out), &h); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(h.Runs) != 12 || len(h.Series) != 1 || len(h.Series[0].Values) != 12 || h.Series[0].Step == nil || h.Series[0].Step.Index != 6 {
		t.Fatalf("json: %d runs, series %+v", len(h.Runs), h.Series)
	}

	code, _, stderr = runInTempDir(t, "history", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "no run found under") {
		t.Errorf("empty folder: exit %d: %s", code, stderr)
	}
	if code, _, _ = runInTempDir(t, "history"); code != 2 {
		t.Errorf("no folder: exit %d", code)
	}
}

func TestCompareBaselineAuto(t *testing.T) {
	dir := t.TempDir()
	saveRun(t, dir, nightRun(0, 390, schema.VerdictPass, "28.43.1014")) // older passing run
	saveRun(t, dir, nightRun(1, 391, schema.VerdictPass, "28.43.1014")) // the one to pick
	saveRun(t, dir, nightRun(2, 200, schema.VerdictFail, "28.43.1014")) // failed
	saveRun(t, dir, nightRun(3, 392, schema.VerdictPass, "28.44.1000")) // other firmware
	other := nightRun(4, 390, schema.VerdictPass, "28.43.1014")
	other.Run.Scenario = "wideep"
	saveRun(t, dir, other)
	cur := saveRun(t, dir, nightRun(5, 250, schema.VerdictFail, "28.43.1014")) // inside DIR itself; -36%
	saveRun(t, dir, nightRun(6, 390, schema.VerdictPass, "28.43.1014"))        // after the current run

	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, stderr := runInTempDir(t, "compare", "--baseline", "auto", dir, filepath.Dir(cur), "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (regression): %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"baseline: nightly-01 (" + filepath.Join(dir, "nightly-01", "report.json") + "): 1 of 1 result(s), the latest run that passed them",
		"not used: 1 run(s): started after the current run (latest nightly-06)",
		"not used: 1 run(s): another scenario (latest nightly-04: wideep)",
		`not used: 1 run(s): fingerprint differs (latest nightly-03: nic.firmware "28.44.1000", current "28.43.1014")`,
		"not used: 1 run(s): passed none of the current run's results (latest nightly-02: fail, 0 pass, 1 fail, 0 error)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in stderr:\n%s", want, stderr)
		}
	}
	// Then exactly compare nightly-01 nightly-05.
	code2, out2, _ := runInTempDir(t, "compare", filepath.Join(dir, "nightly-01", "report.json"), cur)
	if code2 != code || out2 != out || !strings.Contains(out, "baseline nightly-01 → current nightly-05") {
		t.Errorf("auto and explicit differ: %d %d\n%s\n%s", code, code2, out, out2)
	}
	if st, err := os.Stat(junit); err != nil || st.Size() == 0 {
		t.Errorf("junit: %v", err)
	}

	// No candidate: exit 4, the reasons named.
	lone := t.TempDir()
	first := saveRun(t, lone, nightRun(0, 390, schema.VerdictPass, "28.43.1014"))
	code, _, stderr = runInTempDir(t, "compare", "--baseline", "auto", lone, first)
	if code != exitNoBaseline || !strings.Contains(stderr, `no baseline for scenario "nightly" under `+lone) || !strings.Contains(stderr, "no other run found") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runInTempDir(t, "compare", "--baseline", "latest", lone, first)
	if code != 2 || !strings.Contains(stderr, "the only mode is auto") {
		t.Errorf("bad mode: exit %d: %s", code, stderr)
	}
	code, _, stderr = runInTempDir(t, "compare", "--baseline", "auto", first)
	if code != 2 || !strings.Contains(stderr, "needs DIR") {
		t.Errorf("one argument: exit %d: %s", code, stderr)
	}
}

// `history -o json` prints the same whether the runs have their
// history.idx or not: the first pass reads report.json and writes them,
// the second reads them.
func TestHistoryCmdSameWithIndex(t *testing.T) {
	dir := t.TempDir()
	for i := range 16 {
		gbps, fw := 390.0+float64(i%3), "28.43.1014"
		if i >= 9 {
			gbps, fw = 300+float64(i%3), "28.44.1000"
		}
		verdict := schema.VerdictPass
		if i == 4 {
			verdict = schema.VerdictFail
		}
		saveRun(t, dir, nightRun(i, gbps, verdict, fw))
	}
	idx := filepath.Join(dir, "nightly-07", history.IndexFile)
	if _, err := os.Stat(idx); err == nil {
		t.Fatal("history.idx before any history")
	}
	code, cold, stderr := runInTempDir(t, "history", dir, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(idx); err != nil {
		t.Fatalf("cold history wrote no index: %v", err)
	}
	code, warm, stderr := runInTempDir(t, "history", dir, "-o", "json")
	if code != 0 || warm != cold || !strings.Contains(cold, `"changes"`) {
		t.Errorf("exit %d %s; with the index:\n%s\nwithout:\n%s", code, stderr, warm, cold)
	}
}

// twoTests is nightRun with a second result, read-bw, of its own figure
// and verdict.
func twoTests(night int, write, read float64, writeVerdict, readVerdict string) *schema.Report {
	r := nightRun(night, write, writeVerdict, "28.43.1014")
	v := read * 1e9
	r.Results = append(r.Results, schema.Result{Test: "read-bw", Tool: "ib_read_bw", Family: parsers.FamilyPerftest, Metric: parsers.MetricBandwidth,
		From: "a-0", To: "b-0", Verdict: readVerdict, Samples: []parsers.Sample{{Bytes: 1 << 20, BWAvgBps: &v}}})
	r.Summary = schema.CountVerdicts(r.Results)
	return r
}

// TestCompareBaselineAutoPerSeries: a nightly with one known-bad link
// still gets a baseline for everything else: each result is compared with
// the latest run that passed it, and stderr says which run served what.
func TestCompareBaselineAutoPerSeries(t *testing.T) {
	dir := t.TempDir()
	saveRun(t, dir, twoTests(0, 390, 380, schema.VerdictPass, schema.VerdictPass)) // the last night read-bw passed
	saveRun(t, dir, twoTests(1, 391, 100, schema.VerdictPass, schema.VerdictFail)) // read-bw broke; write-bw fine
	saveRun(t, dir, twoTests(2, 392, 0, schema.VerdictPass, schema.VerdictError))
	cur := saveRun(t, dir, twoTests(3, 250, 379, schema.VerdictPass, schema.VerdictPass)) // write-bw dropped 36%
	code, out, stderr := runInTempDir(t, "compare", "--baseline", "auto", dir, filepath.Dir(cur))
	if code != 1 {
		t.Fatalf("exit %d, want 1 (write-bw regressed against nightly-02): %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"baseline: nightly-02 (" + filepath.Join(dir, "nightly-02", "report.json") + "): 1 of 2 result(s)",
		"baseline: nightly-00 (" + filepath.Join(dir, "nightly-00", "report.json") + "): 1 of 2 result(s)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in stderr:\n%s", want, stderr)
		}
	}
	if !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "392.00 Gb/s") || strings.Contains(out, "100.00 Gb/s") {
		t.Errorf("write-bw not compared with nightly-02, or read-bw with the failed night:\n%s", out)
	}
}

// TestHistoryRunTwice: a run reached twice (a folder given twice, a copy of
// a run folder) is counted once and the copy named; compare DIR DIR reads
// each folder's report.json and flags a run compared with itself.
func TestHistoryRunTwice(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		saveRun(t, dir, nightRun(i, 390, schema.VerdictPass, "28.43.1014"))
	}
	copyDir := filepath.Join(dir, "copy")
	saveRun(t, copyDir, nightRun(1, 390, schema.VerdictPass, "28.43.1014"))
	code, out, stderr := runInTempDir(t, "history", dir, filepath.Join(dir, "nightly-00"))
	if code != 0 || !strings.Contains(out, "3 runs from") {
		t.Fatalf("exit %d, want 3 runs:\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, filepath.Join(copyDir, "nightly-01", "report.json")) || !strings.Contains(stderr, "the same run as") {
		t.Errorf("the copy is not named:\n%s", stderr)
	}
	if strings.Contains(out, "rule:") {
		t.Errorf("rule printed without --explain:\n%s", out)
	}
	_, out, _ = runInTempDir(t, "history", "--explain", dir)
	if !strings.Contains(out, "rule: ") {
		t.Errorf("--explain prints no rule:\n%s", out)
	}

	run := filepath.Join(dir, "nightly-02")
	code, out, stderr = runInTempDir(t, "compare", filepath.Join(dir, "nightly-01"), run)
	if code != 0 || !strings.Contains(out, "baseline nightly-01 → current nightly-02") || strings.Contains(out, "rule:") {
		t.Errorf("compare DIR DIR: exit %d\n%s\n%s", code, out, stderr)
	}
	code, _, stderr = runInTempDir(t, "compare", run, run)
	if code != 0 || !strings.Contains(stderr, "warning: baseline and current are the same run (nightly-02") {
		t.Errorf("compare RUN RUN: exit %d, stderr:\n%s", code, stderr)
	}
	_, out, _ = runInTempDir(t, "compare", "--explain", filepath.Join(dir, "nightly-01"), run)
	if !strings.Contains(out, "rule: regression = ") {
		t.Errorf("--explain prints no rule:\n%s", out)
	}
}
