package report

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
)

// nightlyBW is a 1 MiB ib_write_bw figure per night: a four-value wobble
// around 391.5 Gb/s, then from night 12 around 301.5 Gb/s (a firmware
// update the same night).
var nightlyBW = []float64{390, 392, 391, 393, 390, 392, 391, 393, 390, 392, 391, 393,
	300, 302, 301, 303, 300, 302, 301, 303}

// nightlyRun is one night of a small scenario: write-bw a-0 → b-0 at
// 64 KiB (steady) and 1 MiB (nightlyBW), and send-lat at 2 B (a latency
// that steps up from night 15).
func nightlyRun(night int) *Report {
	start := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).Add(time.Duration(night) * 24 * time.Hour)
	fw := "28.43.1014"
	if night >= 12 {
		fw = "28.44.1000"
	}
	bw := func(b int64, gbps float64) parsers.Sample {
		v := gbps * 1e9
		return parsers.Sample{Bytes: b, BWAvgBps: &v}
	}
	lat := 1.9 + 0.01*float64(night%3)
	if night >= 15 {
		lat = 2.6 + 0.01*float64(night%3)
	}
	lr := &LineRate{Bps: 400e9, Source: LineRateDeclared}
	r := &Report{SchemaVersion: SchemaVersion, Run: RunMeta{
		ID: fmt.Sprintf("nightly-%02d", night), Scenario: "nightly", ScenarioHash: "sha256:abc", Start: start,
		Version: "v0.4.0", Backend: "kube", LineRate: lr,
		Fingerprint: map[string]string{FingerprintNICFirmware: fw, FingerprintKernel: "6.8.0"},
	}}
	r.Results = []Result{
		{Test: "write-bw", Tool: "ib_write_bw", Family: parsers.FamilyPerftest, Metric: parsers.MetricBandwidth, From: "a-0", To: "b-0", Op: "WRITE", LineRate: lr,
			Expectation: ">= 70% of line rate", Verdict: VerdictPass,
			Samples: []parsers.Sample{bw(64<<10, 200+float64(night%2)), bw(1<<20, nightlyBW[night])}},
		{Test: "send-lat", Tool: "ib_send_lat", Family: parsers.FamilyPerftest, Metric: parsers.MetricLatency, From: "a-0", To: "b-0",
			Expectation: "average latency <= 5us", Verdict: VerdictPass,
			Samples: []parsers.Sample{{Bytes: 2, LatAvgUS: &lat}}},
		{Test: "rping", Tool: "rping", Family: parsers.FamilyRping, Metric: parsers.MetricPings, From: "a-0", To: "b-0", Verdict: VerdictSkipped, Reason: "no RDMA"},
	}
	r.Summary = CountVerdicts(r.Results)
	return r
}

func nightlyReports(n int) ([]string, []*Report) {
	var paths []string
	var reps []*Report
	for i := range n {
		paths = append(paths, fmt.Sprintf("runs/nightly-%02d/report.json", i))
		reps = append(reps, nightlyRun(i))
	}
	return paths, reps
}

// writeRuns saves reports as run folders under dir.
func writeRuns(t testing.TB, dir string, paths []string, reps []*Report) {
	t.Helper()
	for i, r := range reps {
		p := filepath.Join(dir, paths[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Save(p, r); err != nil {
			t.Fatal(err)
		}
	}
}
