package parsers

import (
	"errors"
	"strings"
	"testing"
)

// TestParseCases covers failure classes and layouts that no capture holds,
// one small text each.
func TestParseCases(t *testing.T) {
	const sep = "---------------------------------------------------------------------------------------\n"
	const bwHdr = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
	cases := []struct {
		name, tool, text string
		ok               bool
		class            ErrorClass
		samples          int
		pings            int
	}{
		{"perftest empty", "ib_write_bw", "", false, ClassNoResults, 0, 0},
		{"perftest --output=bandwidth", "ib_write_bw", "11030.450000\n", false, ClassUnknownFormat, 0, 0},
		{"perftest foreign text", "ib_write_bw", "hello\nworld\n", false, ClassUnknownFormat, 0, 0},
		{"perftest mismatch", "ib_write_bw", " size mismatch: local=65536, remote=4096\n Failed to negotiate parameters\n", false, ClassParameterMismatch, 0, 0},
		{"perftest no device", "ib_read_bw", " Did not detect devices \n If device exists, check if driver is up\n", false, ClassNoDevice, 0, 0},
		{"perftest bad -d", "ib_send_bw", "IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n", false, ClassNoDevice, 0, 0},
		{"perftest stalled receive", "ib_send_bw", sep + bwHdr + " Did not get Message for 120 Seconds, exiting..\n Total Received=7, Total Iters Required=1000\n", false, ClassTimeout, 0, 0},
		{"perftest peer gone after rows", "ib_write_bw", sep + bwHdr + " 2          5000             9.10               9.00               4.718592\n" + sep +
			"ethernet_read_keys: Couldn't read remote address\n Failed to exchange data between server and clients\n", false, ClassConnectionFailed, 1, 0},
		{"perftest header only", "ib_write_bw", sep + "                    RDMA_Write BW Test\n" + sep + bwHdr, false, ClassTruncated, 0, 0},
		{"perftest cut mid-table", "ib_write_bw", bwHdr + " 2          5000             9.10               9.00               4.718592\n 4   50", false, ClassTruncated, 1, 0},
		{"perftest nan and exponent", "ib_write_bw", bwHdr + " 2          5000             -nan               1.5e+03               4.718592\n" + sep, true, "", 1, 0},
		{"perftest server waits forever", "ib_write_bw", "\n************************************\n* Waiting for client to connect... *\n************************************\n", false, ClassTruncated, 0, 0},
		{"perftest launcher prefixes", "ib_write_bw", "[1,0]<stdout>:" + bwHdr + "[1,0]<stdout>: 65536      5000             11030.78            11030.45\t\t     0.176487\r\n[1,0]<stdout>:" + sep, true, "", 1, 0},
		{"perftest log time stamps", "ib_write_bw", "2026-07-28 10:17:18,674 " + bwHdr + "2026-07-28 10:17:18,675  65536      5000             11030.78            11030.45\t\t     0.176487\n2026-07-28 10:17:18,675 " + sep, true, "", 1, 0},
		{"perftest avocado", "ib_write_bw", "07:52:39 DEBUG| [stdout] " + bwHdr + "07:52:39 DEBUG| [stdout]  65536      5000             11030.78            11030.45\t\t     0.176487\n07:52:39 DEBUG| [stdout] " + sep, true, "", 1, 0},
		{"perftest interleaved sweeps", "ib_send_bw", "\n************************************\n* Waiting for client to connect... *\n" + bwHdr + bwHdr +
			" 2 1000 0.00 4.91 2.572540\n 2 1000 4.85 4.80 2.518597\n 4 1000 8.76 8.75 2.295007\n 8 1000 19.49 19.48 2.552887\n 4 1000 0.00 8.83 2.315508\n" +
			sep + " 8 1000 0.00 19.66 2.577234\n" + sep, true, "", 3, 0},
		{"perftest run_infinitely stopped", "ib_write_bw", bwHdr + " 65536 100000 0.00 11030.45 0.176487\n 65536 100000 0.00 11031.10 0.176498\n\n User stopped traffic\n", true, "", 2, 0},
		{"perftest histogram", "ib_write_lat", " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n#, usec\n1, 1.52\n2, 1.60\n 2 1000 1.50 3.00 1.60 1.62 0.05 1.90 2.90\n" + sep, true, "", 1, 0},
		{"rping ok", "rping", "ping data: rdma-ping-0: ABC\nping data: rdma-ping-1: BCD\n", true, "", 0, 2},
		{"rping gap", "rping", "ping data: rdma-ping-0: ABC\nping data: rdma-ping-2: CDE\n", false, ClassDataError, 0, 2},
		{"rping mismatch", "rping", "ping data: rdma-ping-0: ABC\ndata mismatch!\nrping client failed: -1\n", false, ClassDataError, 0, 1},
		{"rping fewer than count", "rping", "count 5\nping data: rdma-ping-0: ABC\n", false, ClassTruncated, 0, 1},
		{"rping rejected", "rping", "cma event RDMA_CM_EVENT_REJECTED, error 8\nwait for CONNECTED state 4\nconnect error -1\n", false, ClassConnectionFailed, 0, 0},
		{"rping no device", "rping", "No RDMA devices were detected\n", false, ClassNoDevice, 0, 0},
		{"rping silent", "rping", "", false, ClassNoResults, 0, 0},
		{"rping usage", "rping", "Invalid size 5 (valid range is 23 to 65536)\n", false, ClassUsageError, 0, 0},
		{"ucx multi-thread final", "ucx_perftest", "|              |              |        latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |\nFinal:                100000                         2.500                  3.05                  400000\n", true, "", 1, 0},
		{"ucx thousands separators", "ucx_perftest", "|              |              |       overhead (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |\nFinal:             1,000,000      0.000     1.670     1.670     4,568.27    4,568.27      598,789      598,789\n", true, "", 1, 0},
		{"ucx header only", "ucx_perftest", "|              |              |       overhead (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |\n", false, ClassTruncated, 0, 0},
		{"ucx peer failure", "ucx_perftest", "[1717108085.315264] [gpu1:3292353:0]        libperf.c:1234 UCX  ERROR sock: rte recv: remote peer failure\n", false, ClassConnectionFailed, 0, 0},
		{"ucx usage", "ucx_perftest", "Invalid option argument for -t\n  Usage: ucx_perftest [ server-hostname ] [ options ]\n", false, ClassUsageError, 0, 0},
		{"iperf3 cut JSON", "iperf3", "{\n\t\"start\": {\n\t\t\"version\": \"iperf 3.12\"", false, ClassTruncated, 0, 0},
		{"iperf3 no end", "iperf3", `{"start":{"test_start":{"protocol":"TCP","num_streams":1,"blksize":131072}},"intervals":[],"end":{}}`, false, ClassTruncated, 0, 0},
		{"iperf3 udp", "iperf3", `{"start":{"test_start":{"protocol":"UDP","num_streams":1,"blksize":1460}},"end":{"sum":{"seconds":10,"bytes":1250000,"bits_per_second":1000000,"jitter_ms":0.01,"lost_percent":0}}}`, true, "", 1, 0},
		{"iperf3 text refused", "iperf3", "iperf3: error - unable to connect to server: Connection refused\n", false, ClassConnectionFailed, 0, 0},
		{"iperf3 text cut", "iperf3", "Connecting to host 127.0.0.1, port 5201\n[  5] local 127.0.0.1 port 4 connected to 127.0.0.1 port 5201\n", false, ClassTruncated, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms, err := Parse(c.tool, strings.NewReader(c.text))
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) == 0 {
				t.Fatal("no measurement")
			}
			m := ms[0]
			if m.OK != c.ok || m.ErrorClass != c.class || len(m.Samples) != c.samples || m.Tool != c.tool {
				t.Errorf("got tool=%s ok=%v class=%q samples=%d error=%q; want ok=%v class=%q samples=%d",
					m.Tool, m.OK, m.ErrorClass, len(m.Samples), m.Error, c.ok, c.class, c.samples)
			}
			if !m.OK && m.Error == "" {
				t.Error("a failed measurement must say why")
			}
			if c.pings > 0 && (m.Pings == nil || *m.Pings != c.pings) {
				t.Errorf("pings = %v, want %d", m.Pings, c.pings)
			}
		})
	}
}

func TestParseFigures(t *testing.T) {
	ms, _ := Parse("ucx_perftest", strings.NewReader("|              |              |        latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |\n"+
		"Final:                100000                         2.500                  3.05                  400000\n"))
	s := ms[0].Samples[0]
	if s.Iterations != 100000 || *s.LatAvgUS != 2.5 || *s.BWAvgBps != 3.05*mibPerSecBits || *s.MsgRatePPS != 400000 || s.LatTypicalUS != nil {
		t.Errorf("multi-thread final line read as %+v", s)
	}
	ms, _ = Parse("ib_write_bw", strings.NewReader(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"+
		" 2          20000           0.147331            0.146472            9.154486\n"))
	s = ms[0].Samples[0]
	if *s.BWAvgBps != 0.146472e9 || *s.BWPeakBps != 0.147331e9 || *s.MsgRatePPS != 9.154486e6 {
		t.Errorf("6-decimal Gb/s row read as %+v", s)
	}
}

func TestParseUnknownTool(t *testing.T) {
	_, err := Parse("ib_wirte_bw", strings.NewReader(""))
	var u *UnknownToolError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "ib_write_bw") || !strings.Contains(err.Error(), "ucx_perftest") {
		t.Fatalf("err = %v; want an UnknownToolError listing the tools", err)
	}
	for _, tool := range []string{"nixlbench", "all_reduce_perf"} {
		ms, err := Parse(tool, strings.NewReader(""))
		if err != nil || len(ms) != 1 || ms[0].OK || ms[0].ErrorClass == ClassNone || ms[0].Tool != tool {
			t.Fatalf("%s on empty input: %+v, %v; want one failed measurement with a class", tool, ms, err)
		}
	}
}

func TestDetectCases(t *testing.T) {
	cases := map[string]string{
		"                    RDMA_Read Latency Test\n":                                             "ib_read_lat",
		"                    Atomic FETCH_AND_ADD BW Test\n":                                       "ib_atomic_bw",
		"$ ib_read_bw -d mlx5_0 10.0.0.1\nCouldn't connect to 10.0.0.1:18515\n":                    "ib_read_bw",
		"server ping data: rdma-ping-0: ABC\n":                                                     "rping",
		"# Collective test starting: all_gather_perf\n":                                            "all_gather_perf",
		"# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728\n":                                      "nccl-tests",
		"NIXLBench Configuration\n":                                                                "nixlbench",
		"iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr\n": "ucx_perftest",
		`{"start":{"connecting_to":{"host":"127.0.0.1"}},"end":{}}`:                                "iperf3",
		"{\n\"test_info\": {\n\"test\": \"Send_Latency_Test\",\n":                                  "ib_send_lat",
		`{"version":3,"nccl_version":22807,"args":["./build/alltoall_perf","-b","8"]}`:             "alltoall_perf",
	}
	for text, want := range cases {
		if got, ok := Detect([]byte(text)); !ok || got != want {
			t.Errorf("Detect(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	if got, ok := Detect([]byte("just some log\n")); ok {
		t.Errorf("Detect(unrelated) = %q, true; want false", got)
	}
}
