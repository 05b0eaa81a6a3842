package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func renderHTML(t testing.TB, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, HTMLOptions{}); err != nil {
		if errors.Is(err, ErrEChartsMissing) && os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHTMLContent(t *testing.T) {
	html := string(renderHTML(t, fullReport(1)))
	for _, want := range []string{
		"Verdicts, worst first", "All-to-all matrices", "NIXL backend comparison", "Latency percentiles",
		"NCCL bus bandwidth", "Percent of line rate per pair", "TCP fallback", "t-tcp", "raw/fabric-a2a/",
		"ep-3 → ep-5", "nic.firmware", "ep-alltoall — NCCL bus bandwidth versus size", "line rate 400 Gb/s",
		"line rate 100 GB/s", "kv-transfer WRITE: backends ranked", "echarts.init",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// Offline: no script, stylesheet or image from elsewhere.
	for _, bad := range []string{`src="http`, `href="http`, "go-echarts-assets", "cdn."} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML refers to the network: %q", bad)
		}
	}
	// The slow link is the first row of the slow-endpoint table.
	i := strings.Index(html, "fabric-a2a: endpoints with the lowest")
	if i < 0 || !strings.Contains(html[i:i+600], "ep-3") && !strings.Contains(html[i:i+600], "ep-5") {
		t.Errorf("slow endpoint table does not start with ep-3 or ep-5")
	}
}

func TestHTMLWithoutAssetFails(t *testing.T) {
	if _, err := echartsJS(); err != nil {
		if err.Error() != "echarts asset missing: run make assets" {
			t.Fatalf("error = %q", err)
		}
		return
	}
	t.Log("asset present: the missing-asset path is covered by ErrEChartsMissing's message")
}

// writeHTMLFile renders r into dir/report.html.
func writeHTMLFile(t testing.TB, dir string, r *Report) string {
	t.Helper()
	p := filepath.Join(dir, "report.html")
	if err := os.WriteFile(p, renderHTML(t, r), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
