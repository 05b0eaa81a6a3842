package parsers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// sharedCorpus finds <repo root>/../shared/corpus, the repo root being the
// nearest directory above with a go.mod. Tests skip only when it is absent.
func sharedCorpus(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	corpus := filepath.Join(dir, "..", "shared", "corpus")
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("shared corpus not present at %s", corpus)
	}
	return corpus
}

// absent marks a figure that must not be in the sample (e.g. a BW peak
// printed as 0.00 because it was not measured).
const absent = -1.0

func mib(v float64) float64 { return v * mibPerSecBits }
func gb(v float64) float64  { return v * gbPerSecBits }

// confWant is what one measurement of a corpus file must say.
type confWant struct {
	side  string
	ok    bool
	class ErrorClass
	n     int                // samples
	last  map[string]float64 // JSON figures of the last (largest) sample
	first map[string]float64 // JSON figures of the first sample
	pings int                // rping: -1 for none
	info  map[string]string
	warn  int // warnings (CPU-frequency, peak-not-measured …)
}

// corpusCases are the key figures of every perftest and rping file in
// ../shared/corpus, read off the files by hand.
var corpusCases = map[string]struct {
	tool string
	want []confWant
}{
	"perftest/error_couldnt_connect_unable_init_socket.txt":   {"ib_write_bw", []confWant{{class: ClassConnectionFailed}}},
	"perftest/error_create_qp_failed_client.txt":              {"ib_write_bw", []confWant{{class: ClassToolError}}},
	"perftest/error_create_qp_failed_server.txt":              {"ib_write_bw", []confWant{{side: "server", class: ClassToolError}}},
	"perftest/error_lat_bidirectional_parser_avocado_log.txt": {"ib_read_lat", []confWant{{class: ClassUsageError}}},
	"perftest/send_bw_a_hdr_ib_server_mib_truncated.txt": {"ib_send_bw", []confWant{{
		side: "server", class: ClassTruncated, n: 14, warn: 1,
		last:  map[string]float64{"bytes": 16384, "iterations": 100000, "bw_avg_bps": mib(23551.65), "bw_peak_bps": absent, "msg_rate_pps": 1.507306e6},
		first: map[string]float64{"bytes": 2, "bw_avg_bps": mib(9.29)},
		info:  map[string]string{"device": "mlx5_ib0", "link_type": "IB", "mtu": "4096[B]", "bw_unit": "MiB/sec"},
	}}},
	"perftest/send_bw_a_ib_client_mbsec_crlf.txt": {"ib_send_bw", []confWant{{
		side: "client", ok: true, n: 23,
		last: map[string]float64{"bytes": 8388608, "iterations": 1000, "bw_avg_bps": mib(23396.08), "bw_peak_bps": mib(23401.80), "msg_rate_pps": 0.002925e6},
		info: map[string]string{"device": "mlx5_2", "bw_unit": "MB/sec", "number_of_qps": "1", "transport_type": "IB", "connection_type": "RC"},
	}}},
	"perftest/send_bw_a_ib_server_mbsec_crlf.txt": {"ib_send_bw", []confWant{{
		side: "server", ok: true, n: 23,
		last: map[string]float64{"bytes": 8388608, "bw_avg_bps": mib(23426.81), "bw_peak_bps": absent},
	}}},
	"perftest/send_bw_a_roce10g_client_gid_crlf.txt": {"ib_send_bw", []confWant{{
		side: "client", ok: true, n: 23,
		last: map[string]float64{"bytes": 8388608, "bw_avg_bps": mib(1100.71), "bw_peak_bps": mib(1100.83)},
		info: map[string]string{"gid_index": "3", "link_type": "Ethernet", "mtu": "1024[B]"},
	}}},
	"perftest/send_bw_n5_cpufreq_warning_client_then_server_crlf.txt": {"ib_send_bw", []confWant{
		{side: "client", ok: true, n: 1, warn: 1, last: map[string]float64{"bytes": 1024, "iterations": 5, "bw_avg_bps": mib(264.94), "bw_peak_bps": mib(264.95)}},
		{side: "server", ok: true, n: 1, warn: 1, last: map[string]float64{"bytes": 1024, "bw_avg_bps": mib(437.92), "bw_peak_bps": absent}},
	}},
	"perftest/send_bw_q4096_fragment_cpufreq_warning_crlf.txt": {"perftest", []confWant{{
		ok: true, n: 1, warn: 1,
		last: map[string]float64{"bytes": 1024, "iterations": 4096000, "bw_avg_bps": mib(956.64), "bw_peak_bps": mib(1082.89), "msg_rate_pps": 0.979595e6},
	}}},
	"perftest/send_lat_a_hdr_ib_server_truncated.txt": {"ib_send_lat", []confWant{{
		side: "server", class: ClassTruncated, n: 14,
		last: map[string]float64{"bytes": 16384, "lat_min_us": 3.68, "lat_typical_us": 3.76, "lat_avg_us": 3.77, "lat_p99_us": 3.91, "lat_p999_us": 5.57},
	}}},
	"perftest/send_lat_dc_a_q2_client_crlf.txt": {"ib_send_lat", []confWant{{
		side: "client", ok: true, n: 23,
		last: map[string]float64{"bytes": 8388608, "iterations": 1000000, "lat_max_us": 1280.96, "lat_avg_us": 696.55, "lat_stdev_us": 5.83, "lat_p99_us": 697.55, "lat_p999_us": 698.87},
		info: map[string]string{"number_of_qps": "2", "connection_type": "DC", "data_ex_method": "rdma_cm"},
	}}},
	"perftest/send_lat_dc_a_q2_server_crlf.txt": {"ib_send_lat", []confWant{{
		side: "server", ok: true, n: 23,
		last: map[string]float64{"bytes": 8388608, "lat_max_us": 1280.73, "lat_p99_us": 697.56, "lat_p999_us": 698.89},
	}}},
	"perftest/write_bw_bidir_q4_a_gbits_ionic400g_client.txt": {"ib_write_bw", []confWant{{
		side: "client", ok: true, n: 23,
		first: map[string]float64{"bytes": 2, "iterations": 20000, "bw_avg_bps": gb(0.146472), "bw_peak_bps": gb(0.147331)},
		last:  map[string]float64{"bytes": 8388608, "bw_avg_bps": gb(779.21), "msg_rate_pps": 0.011611e6},
		info:  map[string]string{"number_of_qps": "4", "bw_unit": "Gb/sec", "device": "ionic_1"},
	}}},
	"perftest/write_bw_bidir_q4_a_gbits_ionic400g_server_vendorfork.txt": {"ib_write_bw", []confWant{{
		side: "server", ok: true, n: 23,
		last: map[string]float64{"bytes": 8388608, "bw_avg_bps": gb(779.21)},
		info: map[string]string{"device": "ionic_7", "cpu_freq": "3295[MHz]"},
	}}},
	"perftest/write_bw_bidir_q4_a_rocm_gdr_server_and_client_vendorfork.txt": {"ib_write_bw", []confWant{
		{side: "server", ok: true, n: 23, last: map[string]float64{"bytes": 8388608, "bw_avg_bps": gb(697.97), "bw_peak_bps": gb(698.41)}},
		{side: "client", ok: true, n: 23, last: map[string]float64{"bytes": 8388608, "bw_avg_bps": gb(697.97)}},
	}},
	"perftest/write_bw_loopback_interleaved_server_client_mib.txt": {"ib_write_bw", []confWant{
		{side: "server", ok: true, n: 1, warn: 1, last: map[string]float64{"bytes": 1000, "iterations": 5000, "bw_avg_bps": mib(4020.54), "bw_peak_bps": mib(4104.91)}},
		{side: "client", ok: true, n: 1, last: map[string]float64{"bytes": 1000, "bw_avg_bps": mib(4020.54), "msg_rate_pps": 4.215846e6}},
	}},
	"perftest/write_bw_postlist_duration60_gbits_ib0.txt": {"ib_write_bw", []confWant{{
		side: "client", ok: true, n: 1,
		last: map[string]float64{"bytes": 8, "iterations": 224958464, "bw_avg_bps": gb(0.48), "bw_peak_bps": absent, "msg_rate_pps": 7.498617e6},
		info: map[string]string{"post_list": "128", "gid_index": "2"},
	}}},
	"rping/addr_error_etimedout_crlf.txt":                  {"rping", []confWant{{class: ClassConnectionFailed, pings: -1}}},
	"rping/client_debug_d_C10_truncated.txt":               {"rping", []confWant{{class: ClassTruncated, pings: -1}}},
	"rping/client_v_C3_mlx5_roce_crlf.txt":                 {"rping", []confWant{{side: "client", ok: true, pings: 3}}},
	"rping/server_client_loopback_debug_hang_softroce.txt": {"rping", []confWant{{class: ClassTruncated, pings: -1}}},
	"rping/server_v_C3_mlx5_roce_crlf.txt":                 {"rping", []confWant{{side: "server", ok: true, pings: 3}}},
	"rping/server_v_C3_state9_race_crlf.txt":               {"rping", []confWant{{side: "server", ok: true, pings: 3}}},
}

// TestCorpusConformance parses every perftest and rping capture of the
// shared corpus (detecting the tool first) and checks the table above; a
// corpus file missing from the table fails the test.
func TestCorpusConformance(t *testing.T) {
	corpus := sharedCorpus(t)
	var files []string
	for _, dir := range []string{"perftest", "rping"} {
		fs, _ := filepath.Glob(filepath.Join(corpus, dir, "*.txt"))
		files = append(files, fs...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no perftest or rping files in the corpus")
	}
	for _, f := range files {
		rel := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		t.Run(rel, func(t *testing.T) {
			c, ok := corpusCases[rel]
			if !ok {
				t.Fatalf("%s is not in corpusCases: add its key figures", rel)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tool, ok := Detect(data)
			if !ok || tool != c.tool {
				t.Fatalf("Detect = %q, %v; want %q", tool, ok, c.tool)
			}
			ms, err := Parse(tool, bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != len(c.want) {
				t.Fatalf("%d measurements, want %d: %+v", len(ms), len(c.want), ms)
			}
			for i, w := range c.want {
				checkConformance(t, i, ms[i], tool, w)
			}
		})
	}
}

func checkConformance(t *testing.T, i int, m Measurement, tool string, w confWant) {
	t.Helper()
	if m.Tool != tool || m.Side != w.side || m.OK != w.ok || m.ErrorClass != w.class || len(m.Samples) != w.n {
		t.Errorf("#%d: tool=%s side=%q ok=%v class=%q samples=%d; want %s %q %v %q %d (error %q)",
			i, m.Tool, m.Side, m.OK, m.ErrorClass, len(m.Samples), tool, w.side, w.ok, w.class, w.n, m.Error)
	}
	if !m.OK && m.Error == "" {
		t.Errorf("#%d: failed without an error message", i)
	}
	if len(m.Warnings) != w.warn {
		t.Errorf("#%d: %d warnings %q, want %d", i, len(m.Warnings), m.Warnings, w.warn)
	}
	if w.pings != 0 {
		switch {
		case w.pings < 0 && m.Pings != nil:
			t.Errorf("#%d: pings = %d, want none", i, *m.Pings)
		case w.pings > 0 && (m.Pings == nil || *m.Pings != w.pings):
			t.Errorf("#%d: pings = %v, want %d", i, m.Pings, w.pings)
		}
	}
	for k, v := range w.info {
		if m.Info[k] != v {
			t.Errorf("#%d: info[%s] = %q, want %q", i, k, m.Info[k], v)
		}
	}
	if len(m.Samples) > 0 {
		checkFigures(t, i, "last", m.Samples[len(m.Samples)-1], w.last)
		checkFigures(t, i, "first", m.Samples[0], w.first)
	}
}

// checkFigures compares a sample's JSON figures exactly.
func checkFigures(t *testing.T, i int, which string, s Sample, want map[string]float64) {
	t.Helper()
	b, _ := json.Marshal(s)
	var got map[string]float64
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		g, ok := got[k]
		switch {
		case v == absent && ok:
			t.Errorf("#%d %s sample: %s = %v, want absent", i, which, k, g)
		case v != absent && (!ok || g != v):
			t.Errorf("#%d %s sample: %s = %v (present %v), want %v", i, which, k, g, ok, v)
		}
	}
}
