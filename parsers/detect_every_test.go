package parsers

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// issueTools are the binary names issue 3 says `--tool` (and Parse) take.
var issueTools = []string{
	"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw",
	"ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat",
	"rping", "nixlbench", "ucx_perftest", "iperf3",
	"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "alltoall_perf", "sendrecv_perf",
	"broadcast_perf", "reduce_perf", "gather_perf", "scatter_perf", "hypercube_perf",
}

// TestEveryIssueToolAccepted parses one empty input with every binary name
// of the issue: each is known, keeps its name and reports a failed run.
func TestEveryIssueToolAccepted(t *testing.T) {
	for _, tool := range issueTools {
		ms, err := Parse(tool, strings.NewReader(""))
		if err != nil || len(ms) == 0 {
			t.Errorf("Parse(%q, empty) = %v, %v; want a failed measurement", tool, ms, err)
			continue
		}
		if m := ms[0]; m.Tool != tool || m.OK || m.ErrorClass == ClassNone {
			t.Errorf("Parse(%q, empty): tool=%q ok=%v class=%q", tool, m.Tool, m.OK, m.ErrorClass)
		}
	}
}

// captureFamilies maps a capture folder (corpus or testdata) to the family
// its files belong to.
var captureFamilies = map[string]Family{
	"perftest": FamilyPerftest, "rping": FamilyRping, "nixlbench": FamilyNixlbench,
	"nccl-tests": FamilyNCCL, "h200": FamilyNCCL, "h200x2": FamilyNCCL,
	"ucx_perftest": FamilyUCXPerftest, "iperf3": FamilyIperf3,
}

// everyCapture lists the corpus files (when ../shared is present) and the
// testdata captures, the scripts, notes and golden outputs left out.
func everyCapture(t *testing.T) []string {
	t.Helper()
	var files []string
	globs := []string{"../testdata/parsers/*/*", "../testdata/parsers/nccl-tests/*/*"}
	if shared, err := ncclFindShared(); err == nil && shared != "" {
		globs = append(globs, filepath.Join(shared, "corpus", "*", "*.txt"))
	}
	for _, g := range globs {
		m, _ := filepath.Glob(g)
		for _, f := range m {
			if ext := filepath.Ext(f); (ext == ".txt" || ext == ".json") && !strings.Contains(f, "golden") {
				files = append(files, f)
			}
		}
	}
	sort.Strings(files)
	if len(files) < 50 {
		t.Fatalf("only %d captures found", len(files))
	}
	return files
}

// ncclCaptureName is a testdata nccl-tests capture: all_reduce_g2*.txt was
// written by all_reduce_perf.
var ncclCaptureName = regexp.MustCompile(`^([a-z_]+)_g\d`)

// TestDetectEveryCapture runs Detect (as `rdmabench parse` without --tool
// does) on every corpus file and testdata capture: the family must be the
// folder's, a testdata nccl-tests capture must be named by its binary, and
// parsing with the detected name must give what the family parser gives.
func TestDetectEveryCapture(t *testing.T) {
	for _, f := range everyCapture(t) {
		if _, ok := epParsers[filepath.Base(filepath.Dir(f))]; ok {
			continue // no tool family yet, so nothing for Detect to name (issue 33): TestEPGolden reads them
		}
		fam, ok := captureFamilies[filepath.Base(filepath.Dir(f))]
		if !ok {
			t.Errorf("%s: folder of unknown family", f)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head := data // `rdmabench parse` shows Detect the first 64 KiB only
		if len(head) > 64<<10 {
			head = head[:64<<10]
		}
		tool, ok := Detect(head)
		if got, _ := FamilyOf(tool); !ok || got != fam {
			t.Errorf("%s: Detect = %q, %v; want a %s tool", f, tool, ok, fam)
			continue
		}
		if m := ncclCaptureName.FindStringSubmatch(filepath.Base(f)); fam == FamilyNCCL && m != nil &&
			!strings.Contains(f, "corpus") && tool != m[1]+"_perf" {
			t.Errorf("%s: Detect = %q, want %s_perf", f, tool, m[1])
		}
		byName, err1 := Parse(tool, bytes.NewReader(data))
		byFam, err2 := Parse(string(fam), bytes.NewReader(data))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v / %v", f, err1, err2)
		}
		for i := range byFam {
			if tool != string(fam) {
				byFam[i].Tool = tool
			}
		}
		if !reflect.DeepEqual(byName, byFam) {
			t.Errorf("%s: parsing as %q differs from parsing as %s", f, tool, fam)
		}
	}
}

// TestParseToolMismatchWarns: a binary name that the output contradicts is
// kept (it is what was asked) but the measurement says what the text says.
func TestParseToolMismatchWarns(t *testing.T) {
	lat := "---------------------------------------------------------------------------------------\n" +
		"                    RDMA_Read Latency Test\n"
	nccl := "# Collective test starting: all_gather_perf\n"
	cases := []struct{ tool, text, warn string }{
		{"ib_write_bw", lat, "the output says ib_read_lat, not ib_write_bw as asked: figures are ib_read_lat's"},
		{"ib_read_lat", lat, ""},
		{"all_reduce_perf", nccl, "the output says all_gather_perf, not all_reduce_perf as asked: figures are all_gather_perf's"},
		{"all_gather_perf", nccl, ""},
		{"sendrecv_perf", "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor)\n", ""},
	}
	for _, c := range cases {
		ms, err := Parse(c.tool, strings.NewReader(c.text))
		if err != nil || len(ms) != 1 {
			t.Fatalf("%s: %v, %v", c.tool, ms, err)
		}
		got := ""
		for _, w := range ms[0].Warnings {
			if strings.HasPrefix(w, "the output says") {
				got = w
			}
		}
		if ms[0].Tool != c.tool || got != c.warn {
			t.Errorf("%s: tool %q, warning %q; want %q", c.tool, ms[0].Tool, got, c.warn)
		}
	}
}

// softroceTools are the binaries that wrote the real soft-RoCE captures of
// testdata/softroce (see its README), by file name prefix.
var softroceTools = map[string]string{
	"error_wrong_device_server": "perftest", "error_wrong_gid_client": "ib_write_bw",
	"ib_read_lat": "ib_read_lat", "ib_write_bw": "ib_write_bw", "rping": "rping", "ucx_perftest": "ucx_perftest",
}

// TestDetectSoftroceCaptures: every real soft-RoCE output is recognised,
// by its binary where the text names it, and parses to a verdict.
func TestDetectSoftroceCaptures(t *testing.T) {
	files, _ := filepath.Glob("../testdata/softroce/*.txt")
	n := 0
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".txt")
		want := ""
		for prefix, tool := range softroceTools {
			if strings.HasPrefix(base, prefix) && len(prefix) > len(want) {
				want = tool
			}
		}
		if want == "" {
			continue // discover-*.txt: not a benchmark's output
		}
		n++
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := Detect(data); !ok || got != want {
			t.Errorf("%s: Detect = %q, %v; want %q", base, got, ok, want)
			continue
		}
		ms, err := Parse(want, bytes.NewReader(data))
		if err != nil || len(ms) == 0 || ms[0].ErrorClass == ClassUnknownFormat {
			t.Errorf("%s: %+v, %v", base, ms, err)
		}
	}
	if n < 13 {
		t.Fatalf("only %d soft-RoCE captures checked", n)
	}
}
