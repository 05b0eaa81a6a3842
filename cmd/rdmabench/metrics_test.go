package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportOpenMetrics(t *testing.T) {
	rep := copyRun(t, "full.json")
	code, out, stderr := runInTempDir(t, "report", rep, "-o", "openmetrics")
	if code != 0 || !strings.HasSuffix(out, "\n# EOF\n") || !strings.Contains(out, "# TYPE rdmabench_bandwidth_bits_per_second gauge\n") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	prom := filepath.Join(t.TempDir(), "rdmabench.prom")
	code, table, stderr := runInTempDir(t, "report", rep, "--metrics", prom)
	if code != 0 || !strings.Contains(stderr, "wrote "+prom) || !strings.Contains(table, "VERDICT") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile(prom); string(got) != out {
		t.Error("--metrics file differs from -o openmetrics")
	}
	entries, _ := os.ReadDir(filepath.Dir(prom))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if code, _, stderr = runInTempDir(t, "report", rep, "-o", "yaml"); code != 2 || !strings.Contains(stderr, "table, json, openmetrics or benchmark-report") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
