package parsers

import (
	"math"
	"path/filepath"
	"testing"
)

// ncclWant is what a test asserts about one parsed capture. Bandwidths are
// given as the tool printed them (GB/s); the parser reports bits/s.
type ncclWant struct {
	file       string
	ok         bool
	class      ErrorClass
	test       string
	samples    int
	ranks      int
	avgGBps    float64 // -1: absent
	rowBytes   int64   // a row to check (first with this size)
	busGBps    float64 // out-of-place busbw of that row
	inBusGBps  float64 // in-place busbw of that row (-1: absent)
	inWrongNil bool    // in-place #wrong printed as N/A
	transport  string  // "" for none
}

var ncclCaptureWants = []ncclWant{
	{file: "all_reduce_g2.txt", ok: true, test: "all_reduce_perf", samples: 26, ranks: 2, avgGBps: 70.5824, rowBytes: 268435456, busGBps: 298.79, inBusGBps: 299.06},
	{file: "all_reduce_g4.txt", ok: true, test: "all_reduce_perf", samples: 26, ranks: 4, avgGBps: 81.8015, rowBytes: 268435456, busGBps: 341.31, inBusGBps: 340.55},
	{file: "all_reduce_g4.json", ok: true, test: "all_reduce_perf", samples: 26, ranks: 4, avgGBps: 81.801462, rowBytes: 268435456, busGBps: 341.312689, inBusGBps: 340.553392},
	{file: "alltoall_g2.txt", ok: true, test: "alltoall_perf", samples: 26, ranks: 2, avgGBps: 59.5546, rowBytes: 268435456, busGBps: 280.41, inBusGBps: 288.75, inWrongNil: true},
	{file: "alltoall_g4.json", ok: true, test: "alltoall_perf", samples: 26, ranks: 4, avgGBps: 65.685135, rowBytes: 268435456, busGBps: 306.195041, inBusGBps: 321.566546, inWrongNil: true},
	{file: "sendrecv_g4.txt", ok: true, test: "sendrecv_perf", samples: 26, ranks: 4, avgGBps: 50.7372, rowBytes: 268435456, busGBps: 303.00, inBusGBps: 301.46, inWrongNil: true},
	{file: "all_gather_g4.txt", ok: true, test: "all_gather_perf", samples: 26, ranks: 4, avgGBps: 63.6192, rowBytes: 268435456, busGBps: 305.07, inBusGBps: 308.99},
	{file: "reduce_scatter_g2.txt", ok: true, test: "reduce_scatter_perf", samples: 26, ranks: 2, avgGBps: 52.7536, rowBytes: 268435456, busGBps: 237.58, inBusGBps: 239.00},
	{file: "broadcast_g4.txt", ok: true, test: "broadcast_perf", samples: 26, ranks: 4, avgGBps: 79.1853, rowBytes: 268435456, busGBps: 350.20, inBusGBps: 350.92},
	{file: "all_reduce_g2_per_iter_timing.txt", ok: true, test: "all_reduce_perf", samples: 22, ranks: 2, avgGBps: 30.973, rowBytes: 16777216, busGBps: 202.26, inBusGBps: 212.66},
	{file: "sendrecv_g2_check0_na.txt", ok: true, test: "sendrecv_perf", samples: 24, ranks: 2, avgGBps: 52.9846, rowBytes: 67108864, busGBps: 267.27, inBusGBps: 269.14, inWrongNil: true},
	{file: "all_reduce_g2_dtype_all.txt", ok: true, test: "all_reduce_perf", samples: 48, ranks: 2, avgGBps: 2.22462, rowBytes: 1024, busGBps: 0.10, inBusGBps: 0.10},
	{file: "all_reduce_g4_debug_info.txt", ok: true, test: "all_reduce_perf", samples: 26, ranks: 4, avgGBps: 81.8956, rowBytes: 268435456, busGBps: 340.21, inBusGBps: 340.52, transport: TransportP2P},
	{file: "all_reduce_g2_debug_info_socket_p2p_shm_disabled.txt", ok: true, test: "all_reduce_perf", samples: 24, ranks: 2, avgGBps: 1.69349, rowBytes: 67108864, busGBps: 5.31, inBusGBps: 5.40, transport: TransportTCP},
	{file: "all_reduce_g2_min_bw_failed.txt", class: ClassToolError, test: "all_reduce_perf", samples: 24, ranks: 2, avgGBps: 52.2757, rowBytes: 67108864, busGBps: 268.26, inBusGBps: 266.97},
	{file: "all_reduce_g2_socket_bad_ifname_failure.txt", class: ClassNoDevice, test: "all_reduce_perf", ranks: 2, avgGBps: -1},
	{file: "all_reduce_g8_invalid_gpu_count.txt", class: ClassNoDevice, test: "all_reduce_perf", avgGBps: -1},
}

func TestNCCLCaptures(t *testing.T) {
	for _, w := range ncclCaptureWants {
		t.Run(w.file, func(t *testing.T) {
			ms := ncclParseFile(t, filepath.Join(ncclCaptureDir, w.file), ParseNCCL)
			if len(ms) != 1 {
				t.Fatalf("got %d measurements, want 1", len(ms))
			}
			ncclCheckWant(t, ms[0], w)
		})
	}
}

// ncclCheckWant asserts the key figures of one measurement.
func ncclCheckWant(t *testing.T, m Measurement, w ncclWant) {
	t.Helper()
	if m.OK != w.ok || m.ErrorClass != w.class {
		t.Errorf("ok=%v class=%q (%s), want ok=%v class=%q", m.OK, m.ErrorClass, m.Error, w.ok, w.class)
	}
	if w.test != "" && m.Test != w.test {
		t.Errorf("test %q, want %q", m.Test, w.test)
	}
	if len(m.Samples) != w.samples {
		t.Errorf("%d samples, want %d", len(m.Samples), w.samples)
	}
	if m.Ranks != w.ranks {
		t.Errorf("ranks %d, want %d", m.Ranks, w.ranks)
	}
	ncclCheckGBps(t, "avg busbw", m.AvgBusBWBps, w.avgGBps)
	if w.rowBytes != 0 {
		s, ok := ncclFindRow(m.Samples, w.rowBytes)
		if !ok {
			t.Fatalf("no row of %d bytes", w.rowBytes)
		}
		ncclCheckGBps(t, "busbw", s.BusBWBps, w.busGBps)
		ncclCheckGBps(t, "in-place busbw", s.InplaceBusBWBps, w.inBusGBps)
		if w.inWrongNil != (s.InplaceWrong == nil) {
			t.Errorf("in-place #wrong %v, want absent=%v", s.InplaceWrong, w.inWrongNil)
		}
	}
	switch {
	case w.transport == "" && m.Transport != nil:
		t.Errorf("transport %+v, want none", m.Transport)
	case w.transport != "" && (m.Transport == nil || m.Transport.Kind != w.transport):
		t.Errorf("transport %+v, want kind %s", m.Transport, w.transport)
	}
	if m.OK == (m.ErrorClass != ClassNone) {
		t.Errorf("ok=%v inconsistent with class %q", m.OK, m.ErrorClass)
	}
}

func ncclFindRow(ss []Sample, bytes int64) (Sample, bool) {
	for _, s := range ss {
		if s.Bytes == bytes {
			return s, true
		}
	}
	return Sample{}, false
}

// ncclCheckGBps compares a bits/s figure with the GB/s the tool printed;
// want < 0 means the figure must be absent.
func ncclCheckGBps(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	switch {
	case want < 0 && got != nil:
		t.Errorf("%s = %v, want absent", what, *got)
	case want < 0:
	case got == nil:
		t.Errorf("%s absent, want %v GB/s", what, want)
	case math.Abs(*got-want*8e9) > 0.5:
		t.Errorf("%s = %v bit/s, want %v GB/s = %v bit/s", what, *got, want, want*8e9)
	}
}
