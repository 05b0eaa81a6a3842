package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportFixtures is the repository's testdata/report, absolute because each CLI
// test runs in a fresh working directory.
var reportFixtures = func() string {
	p, err := filepath.Abs("../../testdata/report")
	if err != nil {
		panic(err)
	}
	return p
}()

// runInTempDir runs rdmabench with args (through the shared runCLI) in a
// fresh working directory, so that a file written there by surprise shows.
func runInTempDir(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Chdir(t.TempDir())
	return runCLI(t, "", args...)
}

func absPath(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// copyRun puts a fixture report.json in a run folder of its own.
func copyRun(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(reportFixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	_ = os.MkdirAll(dir, 0o755)
	p := filepath.Join(dir, "report.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReportTable(t *testing.T) {
	code, out, _ := runInTempDir(t, "report", absPath(t, filepath.Join(reportFixtures, "full.json")))
	want, _ := os.ReadFile(filepath.Join(reportFixtures, "summary.txt"))
	if code != 0 || out != string(want) {
		t.Fatalf("exit %d, stdout differs from summary.txt:\n%s", code, out)
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	path := absPath(t, filepath.Join(reportFixtures, "full.json"))
	code, out, _ := runInTempDir(t, "report", path, "-o", "json")
	want, _ := os.ReadFile(path)
	if code != 0 || out != string(want) {
		t.Fatalf("exit %d; -o json differs from the report.json it read", code)
	}
}

func TestReportWritesOnlyWhereAsked(t *testing.T) {
	rep := copyRun(t, "full.json")
	junit := filepath.Join(t.TempDir(), "out.xml")
	code, _, stderr := runInTempDir(t, "report", rep, "--html", "auto", "--junit", junit)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html := filepath.Join(filepath.Dir(rep), "report.html")
	if st, err := os.Stat(html); err != nil || st.Size() < 100_000 {
		t.Fatalf("report.html next to report.json: %v", err)
	}
	var doc struct {
		Tests int `xml:"tests,attr"`
	}
	data, _ := os.ReadFile(junit)
	if err := xml.Unmarshal(data, &doc); err != nil || doc.Tests != 67 {
		t.Fatalf("junit: %v, tests=%d", err, doc.Tests)
	}
	cwd, _ := os.Getwd()
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Fatalf("wrote into the working directory: %v", entries)
	}
	// Raw links from an HTML elsewhere point back into the run folder.
	other := filepath.Join(t.TempDir(), "x.html")
	if code, _, e := runInTempDir(t, "report", rep, "--html", other); code != 0 {
		t.Fatal(e)
	}
	page, _ := os.ReadFile(other)
	rel, _ := filepath.Rel(filepath.Dir(other), filepath.Dir(rep))
	if !strings.Contains(string(page), `href="`+filepath.ToSlash(rel)+`/raw/write-bw/`) {
		t.Fatalf("raw links not relative to the run folder %s", rel)
	}
}

func TestReportSchema(t *testing.T) {
	code, out, _ := runInTempDir(t, "report", "--schema")
	want, _ := os.ReadFile(filepath.Join(reportFixtures, "report.schema.json"))
	if code != 0 || out != string(want) {
		t.Fatalf("exit %d; --schema differs from report.schema.json", code)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"schemaVersion": 3`), 0o644)
	cases := [][]string{
		{"report", filepath.Join(dir, "absent.json")},
		{"report", bad},
		{"report"},
		{"report", bad, "-o", "yaml"},
		{"compare", bad, bad},
		{"compare", absPath(t, filepath.Join(reportFixtures, "full.json"))},
		{"compare", absPath(t, filepath.Join(reportFixtures, "full.json")), absPath(t, filepath.Join(reportFixtures, "full.json")), "--threshold", "lots"},
	}
	for _, args := range cases {
		code, _, stderr := runInTempDir(t, args...)
		if code != 2 || !strings.HasPrefix(stderr, "rdmabench: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
	_, _, stderr := runInTempDir(t, "report", bad)
	if !strings.Contains(stderr, "bad.json: not a report.json") {
		t.Errorf("error does not name the file: %q", stderr)
	}
}

func TestCompareExitCodes(t *testing.T) {
	base, cur := absPath(t, filepath.Join(reportFixtures, "baseline.json")), absPath(t, filepath.Join(reportFixtures, "current.json"))
	junit := filepath.Join(t.TempDir(), "compare.xml")
	html := filepath.Join(t.TempDir(), "compare.html")
	code, out, stderr := runInTempDir(t, "compare", base, cur, "--threshold", "5%", "--junit", junit, "--html", html)
	if code != 1 {
		t.Fatalf("regression: exit %d, want 1 (%s)", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(reportFixtures, "compare.txt"))
	if out != string(want) {
		t.Errorf("table differs from compare.txt:\n%s", out)
	}
	for _, w := range []string{"warning: environment differs: nic.firmware", "23 regression(s) and 1 result(s) measured in the baseline missing now"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q: %s", w, stderr)
		}
	}
	if st, err := os.Stat(html); err != nil || st.Size() < 100_000 {
		t.Errorf("compare html: %v", err)
	}
	if data, _ := os.ReadFile(junit); !strings.Contains(string(data), `failures="24"`) {
		t.Errorf("compare junit lacks the 24 failures (23 regressions, 1 missing result)")
	}
	// No regression against itself; a huge threshold hides the drop, not
	// the result that is missing now.
	if code, _, e := runInTempDir(t, "compare", base, base); code != 0 {
		t.Errorf("self-compare: exit %d: %s", code, e)
	}
	if code, _, e := runInTempDir(t, "compare", base, cur, "--threshold", "50%"); code != 1 || !strings.Contains(e, "rdmabench: 1 result(s) measured in the baseline missing now") {
		t.Errorf("threshold 50%%: exit %d, want 1 for the missing read-bw: %s", code, e)
	}
	// A bare fraction is refused rather than read as 0.05%.
	if code, _, e := runInTempDir(t, "compare", base, cur, "--threshold", "0.05"); code != 2 || !strings.Contains(e, "write 5% for 5 percent") {
		t.Errorf("threshold 0.05: exit %d, want 2 with the two spellings: %s", code, e)
	}
	if code, _, _ := runInTempDir(t, "compare", base, base, "--threshold", "5"); code != 0 {
		t.Errorf("threshold 5 (a bare whole number): exit %d, want 0", code)
	}
	code, out, _ = runInTempDir(t, "compare", base, cur, "-o", "json")
	var c struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil || code != 1 || c.Counts["regression"] != 23 {
		t.Errorf("-o json: exit %d, %v, counts %v", code, err, c.Counts)
	}
}

func TestReportRunFolder(t *testing.T) {
	rep := copyRun(t, "full.json")
	code, out, stderr := runInTempDir(t, "report", filepath.Dir(rep))
	if code != 0 || !strings.Contains(out, "67 results: 62 pass, 3 fail, 1 error, 1 skipped") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// An output file in a folder that does not exist is named as the user gave it.
func TestReportOutputInMissingFolder(t *testing.T) {
	rep := copyRun(t, "full.json")
	for _, flag := range []string{"--html", "--junit"} {
		dest := filepath.Join(t.TempDir(), "absent", "out")
		code, _, stderr := runInTempDir(t, "report", rep, flag, dest)
		if code == 0 || !strings.Contains(stderr, "cannot write "+dest+": ") {
			t.Errorf("%s %s: exit %d, stderr %q; want the destination named", flag, dest, code, stderr)
		}
	}
}

// report -o benchmark-report prints the run as a Benchmark Report v0.2
// partial on stdout, and writes nothing else.
func TestReportBenchmarkReport(t *testing.T) {
	code, out, errs := runInTempDir(t, "report", filepath.Join(reportFixtures, "full.json"), "-o", "benchmark-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var br struct {
		Version string `json:"version"`
		Run     struct {
			UID string `json:"uid"`
		} `json:"run"`
		Results struct {
			Observability struct {
				Fabric struct {
					Pairs []json.RawMessage `json:"pairs"`
				} `json:"rdma_fabric"`
			} `json:"observability"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &br); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if br.Version != "0.2" || br.Run.UID == "" || len(br.Results.Observability.Fabric.Pairs) == 0 {
		t.Errorf("version %q uid %q, %d pairs", br.Version, br.Run.UID, len(br.Results.Observability.Fabric.Pairs))
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("wrote %v into the working directory", entries)
	}
}

// compare --baseline PATH CURRENT is compare PATH CURRENT: the natural
// guess works, with no same-run warning.
func TestCompareBaselinePath(t *testing.T) {
	base, cur := absPath(t, filepath.Join(reportFixtures, "baseline.json")), absPath(t, filepath.Join(reportFixtures, "current.json"))
	code, out, stderr := runInTempDir(t, "compare", "--baseline", base, cur)
	want, _ := os.ReadFile(filepath.Join(reportFixtures, "compare.txt"))
	if code != 1 || out != string(want) || strings.Contains(stderr, "same run") {
		t.Errorf("--baseline PATH CURRENT: exit %d, want 1 and compare.txt\n%s\n%s", code, out, stderr)
	}
	if code, _, e := runInTempDir(t, "compare", "--baseline", base, cur, cur); code != 2 || !strings.Contains(e, "CURRENT") {
		t.Errorf("--baseline PATH with two arguments: exit %d, want 2: %s", code, e)
	}
}
