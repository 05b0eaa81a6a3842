package parsers

import (
	"fmt"
	"strings"
	"testing"
)

// nixlConfigBlock renders a configuration block the way nixlbench prints
// it (setw(60) labels, 160-char rules), for the given backend, op and sweep.
func nixlConfigBlock(backend, op string, startBlock, maxBlock, startBatch, maxBatch int) string {
	stars, dashes := strings.Repeat("*", 160), strings.Repeat("-", 160)
	opt := func(label, v string) string { return fmt.Sprintf("%-60s: %s\n", label, v) }
	var b strings.Builder
	b.WriteString(stars + "\nNIXLBench Configuration\n" + stars + "\n")
	b.WriteString(opt("Runtime (--runtime_type=[ETCD,ASIO])", "ETCD"))
	b.WriteString(opt("ETCD Endpoint ", "http://10.0.0.1:2379"))
	b.WriteString("Backend (--backend=[UCX,GDS,GDS_MT,POSIX,Mooncake,HF3FS,OBJ,AZURE_BLOB]): " + backend + "\n")
	b.WriteString(opt("Op type (--op_type=[READ,WRITE])", op))
	b.WriteString(opt("Start block size (--start_block_size=N)", fmt.Sprint(startBlock)))
	b.WriteString(opt("Max block size (--max_block_size=N)", fmt.Sprint(maxBlock)))
	b.WriteString(opt("Start batch size (--start_batch_size=N)", fmt.Sprint(startBatch)))
	b.WriteString(opt("Max batch size (--max_batch_size=N)", fmt.Sprint(maxBatch)))
	b.WriteString(dashes + "\n\n")
	return b.String()
}

// nixlHeader renders the current table header, with the aggregate columns
// that pairwise runs of more than 2 processes add.
func nixlHeader(aggregate bool) string {
	cols := []string{"Block Size (B)", "Batch Size", "B/W (GB/Sec)"}
	w := []int{20, 15, 15}
	if aggregate {
		cols = append(cols, "Aggregate B/W (GB/Sec)", "Network Util (%)")
		w = append(w, 25, 20)
	}
	for _, c := range []string{"Avg Lat. (us)", "Avg Prep (us)", "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)"} {
		cols, w = append(cols, c), append(w, 15)
	}
	var b strings.Builder
	for i, c := range cols {
		fmt.Fprintf(&b, "%-*s", w[i], c)
	}
	return b.String() + "\n" + strings.Repeat("-", 160) + "\n"
}

func nixlRow(block, batch int, bw float64, agg []float64, lat float64) string {
	s := fmt.Sprintf("%-20d%-15d%-15.6f", block, batch, bw)
	if agg != nil {
		s += fmt.Sprintf("%-25.6f%-20.1f", agg[0], agg[1])
	}
	s += fmt.Sprintf("%-15.1f", lat)
	for i := 0; i < 6; i++ {
		s += fmt.Sprintf("%-15.1f", 1.0)
	}
	return s + "\n"
}

func TestNixlbenchSeveralRunsAndAggregate(t *testing.T) {
	text := "WARNING: Adjusting num_iter to 1008 to allow equal distribution to 1 threads\n" +
		"Connecting to ETCD at http://10.0.0.1:2379\nETCD Runtime: Registered as rank 0 item 1 of 4\n" +
		"Init nixl worker, dev all rank 0, type initiator, hostname node-a\n" +
		nixlConfigBlock("UCX", "READ", 4096, 8192, 1, 2) + nixlHeader(true) +
		nixlRow(4096, 1, 1.5, []float64{3.0, 3.0}, 2.7) + nixlRow(4096, 2, 2.5, []float64{5.0, 5.0}, 3.3) +
		nixlRow(8192, 1, 3.5, []float64{7.0, 7.0}, 2.3) + nixlRow(8192, 2, 4.5, []float64{9.0, 9.0}, 3.6) +
		"WARNING: Adjusting num_iter to 1008 to allow equal distribution to 1 threads\n" +
		nixlConfigBlock("LIBFABRIC", "WRITE", 4096, 16384, 1, 1) + nixlHeader(false) +
		nixlRow(4096, 1, 0.9, nil, 4.5) + nixlRow(8192, 1, 1.9, nil, 4.3)
	ms, err := ParseNixlbench(strings.NewReader(text))
	if err != nil || len(ms) != 2 {
		t.Fatalf("got %d measurements, err %v; want 2", len(ms), err)
	}
	read, write := ms[0], ms[1]
	if !read.OK || read.Op != "READ" || read.Backend != "UCX" || len(read.Samples) != 4 || read.Side != "initiator" || read.Ranks != 4 {
		t.Errorf("first run: %+v", read)
	}
	s := read.Samples[3]
	if s.Bytes != 8192 || s.Batch != 2 || *s.BWAvgBps != 36e9 || *s.AggregateBps != 72e9 || *s.NetworkUtil != 9.0 || *s.LatAvgUS != 3.6 {
		t.Errorf("row 4 of run 1: %+v", s)
	}
	// The second run configured 3 block sizes but printed 2 rows.
	if write.OK || write.ErrorClass != ClassTruncated || write.Op != "WRITE" || write.Backend != "LIBFABRIC" || len(write.Samples) != 2 {
		t.Errorf("second run: ok=%v class=%q op=%q backend=%q samples=%d", write.OK, write.ErrorClass, write.Op, write.Backend, len(write.Samples))
	}
	if write.Info["etcd_endpoint"] != "http://10.0.0.1:2379" || write.Info["max_block_size"] != "16384" {
		t.Errorf("second run info: %v", write.Info)
	}
}

func TestNixlbenchFailures(t *testing.T) {
	run := nixlConfigBlock("UCX", "WRITE", 4096, 8192, 1, 1) + nixlHeader(false) + nixlRow(4096, 1, 1.0, nil, 4.0)
	cases := []struct {
		name, text string
		class      ErrorClass
		samples    int
	}{
		{"etcd unreachable", "Connecting to ETCD at http://10.0.0.9:2379\nFailed to acquire lock: failed to connect to all addresses\nFailed to setup ETCD runtime\n", ClassConnectionFailed, 0},
		{"barrier timeout", "Waiting for all processes to start... (expecting 2 total: 1 initiators and 1 targets)\nError in barrier wait xferbench/g/barrier/start_barrier/0/ rank 0 completed 1/2 ranks)\nFailed to synchronize at start barrier\n", ClassTimeout, 0},
		{"ctrl-c mid run", run + "Ctrl-C received, exiting...\n", ClassTimeout, 1},
		{"consistency", run + "Consistency check failed for iov 0:0\n", ClassDataError, 1},
		{"nixl error", run + "E0728 10:17:18.674000 12345 nixl_agent.cpp:74] NIXL: registerMem failed (NIXL_ERR_BACKEND)\n", ClassToolError, 1},
		{"bad op", "Invalid op type: COPY. Must be one of [READ, WRITE]\n", ClassUsageError, 0},
		{"stale size key", "ETCD Runtime: Registered as rank 2 item 3 of 2\nRank 2 is greater than or equal to global size 2\nFailed to setup ETCD runtime\n", ClassParameterMismatch, 0},
		{"config then nothing", nixlConfigBlock("UCX", "READ", 4096, 4096, 1, 1), ClassTruncated, 0},
		{"target only", "Init nixl worker, dev all rank 1, type target, hostname node-b\nAll processes are ready to proceed\n", ClassNoResults, 0},
		{"not nixlbench", "hello\nworld\n", ClassUnknownFormat, 0},
		{"empty", "", ClassNoResults, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms, err := ParseNixlbench(strings.NewReader(c.text))
			if err != nil || len(ms) != 1 {
				t.Fatalf("got %d measurements, err %v", len(ms), err)
			}
			m := ms[0]
			if m.OK || m.ErrorClass != c.class || len(m.Samples) != c.samples || m.Error == "" {
				t.Errorf("ok=%v class=%q error=%q samples=%d; want class %q, %d samples", m.OK, m.ErrorClass, m.Error, len(m.Samples), c.class, c.samples)
			}
		})
	}
}

// A configuration block whose closing rule was lost (trimmed log) must not
// swallow the table below it.
func TestNixlbenchConfigWithoutRule(t *testing.T) {
	cfg := strings.Replace(nixlConfigBlock("UCX", "WRITE", 4096, 8192, 1, 1), strings.Repeat("-", 160)+"\n", "", 1)
	ms, err := ParseNixlbench(strings.NewReader(cfg + nixlHeader(false) + nixlRow(4096, 1, 1.0, nil, 4.0) + nixlRow(8192, 1, 2.0, nil, 4.1)))
	if err != nil || len(ms) != 1 || !ms[0].OK || len(ms[0].Samples) != 2 || ms[0].Op != "WRITE" {
		t.Fatalf("got %+v, %v", ms, err)
	}
}

// `kubectl logs --timestamps` puts an RFC 3339 stamp before every line.
func TestNixlbenchKubectlTimestamps(t *testing.T) {
	text := nixlConfigBlock("UCX", "WRITE", 4096, 8192, 1, 1) + nixlHeader(false) + nixlRow(4096, 1, 1.0, nil, 4.0) + nixlRow(8192, 1, 2.0, nil, 4.1)
	ms, err := ParseNixlbench(strings.NewReader(prefixLines(text, "2026-07-28T10:17:18.674123456Z ", "\n")))
	if err != nil || len(ms) != 1 {
		t.Fatalf("got %+v, %v", ms, err)
	}
	m := ms[0]
	if !m.OK || m.Op != "WRITE" || m.Backend != "UCX" || len(m.Samples) != 2 || *m.Samples[1].BWAvgBps != 16e9 {
		t.Errorf("ok=%v class=%q (%s) op=%q backend=%q samples=%+v", m.OK, m.ErrorClass, m.Error, m.Op, m.Backend, m.Samples)
	}
}
