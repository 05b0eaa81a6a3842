package text

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
)

func TestSummaryTableGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, fixture.Full(1)); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "summary.txt", buf.Bytes())
}

func TestSummaryTableWorstFirst(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, fixture.Full(1)); err != nil {
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
	// By severity: the slow link with the failures, what did not run
	// above the passes (issue 34: PASS was listed above SKIPPED).
	if i, j, k := strings.Index(out, "ep-3 → ep-5"), strings.Index(out, "SKIPPED"), strings.Index(out, "PASS "); i > j || j > k {
		t.Errorf("want the slow link, then the skipped result, then the passes")
	}
}

// The terminal summary of 4,032 results stays short.
func TestSummaryTableFoldsLargeMatrix(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, fixture.BigMatrix()); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(buf.Bytes(), []byte("\n"))
	if lines > 20 || !bytes.Contains(buf.Bytes(), []byte("ep-17 → ep-42")) || !bytes.Contains(buf.Bytes(), []byte("… 4024 more pairs")) {
		t.Fatalf("%d lines:\n%s", lines, buf.String())
	}
}
