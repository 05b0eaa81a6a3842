package e2erdma

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// TestSoftRoCEFixtures parses the recorded real outputs (testdata/softroce)
// with the project's parsers: this runs without the VMs, in every lane, and
// pins what real soft-RoCE output looks like to the parsers.
func TestSoftRoCEFixtures(t *testing.T) {
	const line = 2.5e9 // rxe0's rate: every real figure is below it
	cases := []struct {
		file, tool string
		ok         bool
		class      parsers.ErrorClass
		samples    int
		check      func(t *testing.T, m parsers.Measurement)
	}{
		{"ib_write_bw_64k_client.txt", "ib_write_bw", true, "", 1, bwBelow(line)},
		{"ib_write_bw_64k_server.txt", "ib_write_bw", true, "", 1, bwBelow(line)},
		{"ib_write_bw_sweep_client.txt", "ib_write_bw", true, "", 23, bwBelow(line)},
		{"ib_read_lat_64_client.txt", "ib_read_lat", true, "", 1, func(t *testing.T, m parsers.Measurement) {
			s := m.Samples[0]
			if s.Bytes != 64 || s.LatAvgUS == nil || *s.LatAvgUS <= 0 || *s.LatMinUS > *s.LatAvgUS {
				t.Errorf("latency sample %+v", s)
			}
		}},
		{"rping_client.txt", "rping", true, "", 0, func(t *testing.T, m parsers.Measurement) {
			if m.Pings == nil || *m.Pings != 5 {
				t.Errorf("pings = %v; want 5", m.Pings)
			}
		}},
		{"ucx_perftest_put_bw_rc_verbs_client.txt", "ucx_perftest", true, "", 1, bwBelow(line)},
		{"ucx_perftest_tag_bw_tcp_client.txt", "ucx_perftest", true, "", 1, bwBelow(10e9)},
		{"error_wrong_device_server.txt", "ib_write_bw", false, parsers.ClassNoDevice, 0, nil},
		{"error_wrong_gid_client.txt", "ib_write_bw", false, parsers.ClassConnectionFailed, 0, nil},
		// perftest without a CPU clock rate (TestNoClockOnVMs): the row is
		// kept for what crossed the wire, but it is not a measurement.
		{"error_no_clock_bw_client.txt", "ib_write_bw", false, parsers.ClassClock, 1, noFigures},
		{"error_no_clock_lat_client.txt", "ib_read_lat", false, parsers.ClassClock, 1, noFigures},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(repoRoot, "testdata", "softroce", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ms, err := parsers.Parse(c.tool, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) == 0 {
				t.Fatal("no measurement")
			}
			m := ms[len(ms)-1]
			if m.OK != c.ok || m.ErrorClass != c.class || len(m.Samples) != c.samples {
				t.Fatalf("ok %v class %q samples %d; want %v %q %d (%s)", m.OK, m.ErrorClass, len(m.Samples), c.ok, c.class, c.samples, m.Error)
			}
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

func noFigures(t *testing.T, m parsers.Measurement) {
	s := m.Samples[0]
	if s.Iterations <= 0 || s.BWAvgBps != nil && *s.BWAvgBps != 0 || s.LatAvgUS != nil {
		t.Errorf("row %+v; want the size and iterations without a figure", s)
	}
}

func bwBelow(limit float64) func(t *testing.T, m parsers.Measurement) {
	return func(t *testing.T, m parsers.Measurement) {
		for _, s := range m.Samples {
			if s.BWAvgBps == nil || *s.BWAvgBps <= 0 || *s.BWAvgBps >= limit {
				t.Errorf("size %d: bandwidth %v; want a real figure in (0, %g)", s.Bytes, s.BWAvgBps, limit)
			}
		}
	}
}

// TestRecordedRun checks the recorded `rdmabench run scenarios/softroce.yaml`
// (testdata/softroce/run): it loads with report/schema and holds the
// line rate read from rxe0, five passing tests and RDMA evidence.
func TestRecordedRun(t *testing.T) {
	rep, err := schema.Load(filepath.Join(repoRoot, "testdata", "softroce", "run", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if lr := rep.Run.LineRate; lr == nil || lr.Bps != 2.5e9 || lr.Source != schema.LineRateNIC {
		t.Fatalf("line rate %+v", lr)
	}
	if rep.Summary.Total != 5 || rep.Summary.Pass != 5 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	for _, r := range rep.Results {
		if r.Tool == "ib_write_bw" && (r.Transport == nil || r.Transport.Kind != "rdma" || r.BestBps <= 0 || r.BestBps >= 2.5e9) {
			t.Errorf("%s: transport %+v best %g", r.Test, r.Transport, r.BestBps)
		}
	}
}
