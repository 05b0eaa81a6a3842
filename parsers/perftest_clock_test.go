package parsers

import (
	"os"
	"strings"
	"testing"
)

// perftest without a CPU clock rate prints rows of 0 or inf under -F.
// The captures are real (test/e2erdma TestNoClockOnVMs: "cpu MHz" hidden
// on the client VM); the calibration failure line is perftest's own
// fprintf, as it reaches the same file when stderr is captured with stdout.
func TestPerftestWithoutClock(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../testdata/softroce/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	bw := read("error_no_clock_bw_client.txt")
	const r2 = "Correlation coefficient r^2: 0.612 < 0.9\n"

	cases := []struct {
		name, text string
		want       string // in the error
	}{
		{"bw, cpuinfo without cpu MHz", bw, `no "cpu MHz" in /proc/cpuinfo`},
		{"lat, inf rows", read("error_no_clock_lat_client.txt"), `no "cpu MHz" in /proc/cpuinfo`},
		{"bw, failed calibration (stderr first)", r2 + bw, `its clock calibration failed ("Correlation coefficient r^2: 0.612 < 0.9"`},
		{"bw, failed calibration inside the table", strings.Replace(bw, " 65536      200", r2+" 65536      200", 1), "clock calibration failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms, err := ParsePerftest(strings.NewReader(c.text))
			if err != nil || len(ms) != 1 {
				t.Fatalf("%v, %d measurements", err, len(ms))
			}
			m := ms[0]
			if m.OK || m.ErrorClass != ClassClock || !strings.Contains(m.Error, c.want) {
				t.Fatalf("ok %v class %q error %q; want clock_error naming %q", m.OK, m.ErrorClass, m.Error, c.want)
			}
			if len(m.Samples) != 1 || m.Samples[0].Iterations <= 0 {
				t.Errorf("samples %+v; want the row's size and iterations kept", m.Samples)
			}
			if s := m.Samples[0]; hasFigure(s) || s.BWAvgBps != nil || s.MsgRatePPS != nil || s.BWPeakBps != nil {
				t.Errorf("sample %+v keeps a figure; a failed run is never reported as zeros", s)
			}
		})
	}

	// One size of a sweep without figures: the others are measurements,
	// the empty one is left out and named.
	sweep := read("ib_write_bw_sweep_client.txt")
	var zeroed []string
	for _, l := range strings.Split(sweep, "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "4096" {
			l = " 4096       5             0.000000            0.000000            0.000000"
		}
		zeroed = append(zeroed, l)
	}
	ms, err := ParsePerftest(strings.NewReader(r2 + strings.Join(zeroed, "\n")))
	if err != nil || len(ms) != 1 {
		t.Fatalf("sweep: %v, %d measurements", err, len(ms))
	}
	m := ms[0]
	if !m.OK || len(m.Samples) != 22 || !strings.Contains(strings.Join(m.Warnings, "\n"), "left out size 4096, printed without figures") {
		t.Fatalf("sweep: ok %v, %d samples, warnings %q; want 22 measured sizes and a warning naming 4096", m.OK, len(m.Samples), m.Warnings)
	}
	for _, s := range m.Samples {
		if s.Bytes == 4096 {
			t.Errorf("size 4096 kept: %+v", s)
		}
	}
	// What crossed the wire is still said (the path proof counts it).
	if len(m.Unmeasured) != 1 || m.Unmeasured[0] != (Sample{Bytes: 4096, Iterations: 5}) {
		t.Errorf("unmeasured %+v; want size 4096 × 5 iterations, without figures", m.Unmeasured)
	}
}

// A row of 0 iterations is a true 0: under -D (or --run_infinitely, per
// interval) perftest prints the completions it counted, none when nothing
// arrived (a UD receiver that got no message). That is a measurement of
// the fabric, not a missing clock.
func TestPerftestZeroIterationsIsMeasured(t *testing.T) {
	b, err := os.ReadFile("../testdata/softroce/error_no_clock_bw_client.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), " 65536      200 ", " 65536      0   ", 1)
	ms, err := ParsePerftest(strings.NewReader(text))
	if err != nil || len(ms) != 1 {
		t.Fatalf("%v, %d measurements", err, len(ms))
	}
	m := ms[0]
	if !m.OK || m.ErrorClass != ClassNone || len(m.Samples) != 1 || m.Samples[0].BWAvgBps == nil || *m.Samples[0].BWAvgBps != 0 {
		t.Fatalf("ok %v class %q samples %+v; want one measured row of 0 b/s", m.OK, m.ErrorClass, m.Samples)
	}
}

// perftest --out_json without a clock rate: the same rule as the text.
func TestPerftestJSONWithoutClock(t *testing.T) {
	b, err := os.ReadFile("../testdata/parsers/perftest/write_bw_out_json.json")
	if err != nil {
		t.Fatal(err)
	}
	zeroed := strings.NewReplacer(`"BW_peak": 1187.44`, `"BW_peak": 0.00`, `"BW_average": 1185.02`, `"BW_average": 0.00`,
		`"MsgRate": 0.018960`, `"MsgRate": 0.000000`).Replace(string(b))
	ms, err := ParsePerftestJSON(strings.NewReader(zeroed), PerftestMiB)
	if err != nil || len(ms) != 1 {
		t.Fatalf("%v, %d measurements", err, len(ms))
	}
	m := ms[0]
	if m.OK || m.ErrorClass != ClassClock || len(m.Samples) != 1 || m.Samples[0].BWAvgBps != nil ||
		m.Samples[0].Iterations != 5000 || !strings.Contains(m.Error, `no "cpu MHz" in /proc/cpuinfo`) {
		t.Fatalf("ok %v class %q samples %+v error %q; want clock_error with the row's size and iterations", m.OK, m.ErrorClass, m.Samples, m.Error)
	}
	ms, _ = ParsePerftestJSON(strings.NewReader(string(b)), PerftestMiB)
	if !ms[0].OK {
		t.Fatalf("the real capture: %+v", ms[0])
	}
}
