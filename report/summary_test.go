package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestSummaryTableGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, fullReport(1)); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.txt", buf.Bytes())
}

func TestSummaryTableWorstFirst(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, fullReport(1)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(out, "\n")
	// The first data row is the slowest failing link: ep-3 → ep-5 of the matrix.
	var first string
	for _, l := range lines {
		if strings.Contains(l, "FAIL") || strings.Contains(l, "PASS") || strings.Contains(l, "ERROR") {
			first = l
			break
		}
	}
	if !strings.Contains(first, "ucx-put-bw") {
		t.Errorf("first row = %q, want the TCP fallback at ~5%% of line rate", first)
	}
	for _, want := range []string{"ep-3 → ep-5", "TCP fallback", "… 48 more pairs", "16 ranks", "GB/s", "Gb/s",
		"67 results: 62 pass, 3 fail, 1 error, 1 skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "ep-3 → ep-5"), strings.Index(out, "SKIPPED"); i > j {
		t.Errorf("slow link listed after the skipped result")
	}
}

// A report written by `rdmabench run` on this machine (loopback scenario,
// local backend, no RDMA: skipped RDMA tests, ucx_perftest over TCP with one
// leg per size, iperf3) renders as the fixtures do.
func TestRealReport(t *testing.T) {
	r, err := Load(filepath.Join(testdataDir, "real-loopback.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "real-loopback-summary.txt", buf.Bytes())
	for _, want := range []string{"a-0 → b-0 [1048576]", "SKIPPED", "7 results: 1 pass, 3 fail, 0 error, 3 skipped"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// The three per-size legs of ucx-tcp-bw draw as one line of three points.
	p := buildPage(r, HTMLOptions{})
	var found bool
	for _, s := range p.Sections {
		for _, c := range s.Charts {
			if strings.HasPrefix(c.Title, "ucx-tcp-bw") {
				found = strings.Count(c.Option, `"type":"line"`) == 1
			}
		}
	}
	if !found {
		t.Error("ucx-tcp-bw is not one line through its three sizes")
	}
}
