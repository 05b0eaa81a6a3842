package parsers

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/iotest"
)

// TestPerftestLongCaptureKeepsStrings parses a capture far larger than the
// scanner's buffer, fed in small pieces, and checks that the strings kept
// from earlier lines (banner, header facts, warnings) were not overwritten
// when the buffer was reused: ParsePerftest reads lines without copying.
func TestPerftestLongCaptureKeepsStrings(t *testing.T) {
	data := perftestSweep(400 << 10)
	data = bytes.ReplaceAll(data, []byte(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"),
		[]byte(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\nConflicting CPU frequency values detected: 1.0 != 2.0. CPU Frequency is not max.\n"))
	ms, err := ParsePerftest(iotest.HalfReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 100 {
		t.Fatalf("%d measurements, want > 100", len(ms))
	}
	want, _ := json.Marshal(ms[0])
	for i, m := range ms {
		got, _ := json.Marshal(m)
		if !bytes.Equal(got, want) {
			t.Fatalf("measurement %d differs from the first:\n%s\n%s", i, got, want)
		}
	}
	m := ms[len(ms)-1]
	if m.Test != "RDMA_Write BW Test" || m.Info["device"] != "mlx5_0" || m.Info["gid_index"] != "3" ||
		m.Info["bw_unit"] != "MiB/sec" || len(m.Warnings) != 1 || m.Warnings[0][:11] != "Conflicting" {
		t.Fatalf("kept strings corrupted: %+v", m)
	}
}

// TestPerftestInterleavedSweeps: two processes printing -a sweeps into one
// capture give two tables, each with its sizes in order.
func TestPerftestInterleavedSweeps(t *testing.T) {
	const sep = "---------------------------------------------------------------------------------------\n"
	const hdr = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
	text := "* Waiting for client to connect... *\n" + hdr + hdr +
		" 2 1000 0.00 4.91 2.572540\n 2 1000 4.85 4.80 2.518597\n 4 1000 8.76 8.75 2.295007\n" +
		" 8 1000 19.49 19.48 2.552887\n 4 1000 0.00 8.83 2.315508\n" + sep + " 8 1000 0.00 19.66 2.577234\n" + sep
	ms, err := ParsePerftest(bytes.NewReader([]byte(text)))
	if err != nil || len(ms) != 2 {
		t.Fatalf("%d measurements, %v", len(ms), err)
	}
	for i, m := range ms {
		var sizes []int64
		for _, s := range m.Samples {
			sizes = append(sizes, s.Bytes)
		}
		if !m.OK || len(sizes) != 3 || sizes[0] != 2 || sizes[1] != 4 || sizes[2] != 8 {
			t.Errorf("table %d: ok=%v sizes %v, want [2 4 8]", i, m.OK, sizes)
		}
	}
	if ms[0].Side != "server" || ms[1].Side != "" && ms[1].Side != "client" {
		t.Errorf("sides %q, %q", ms[0].Side, ms[1].Side)
	}
	if *ms[1].Samples[2].BWAvgBps != 19.66*mibPerSecBits {
		t.Errorf("second table's last row = %v", *ms[1].Samples[2].BWAvgBps)
	}
}

// TestPerftestWarningsBounded: a log pouring lines into a table keeps a
// bounded number of them.
func TestPerftestWarningsBounded(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n")
	for i := 0; i < 1000; i++ {
		b.WriteString("NCCL INFO something unrelated\n")
	}
	b.WriteString(" 65536 5000 11030.78 11030.45 0.176487\n---------------------------------------------------------------------------------------\n")
	ms, _ := ParsePerftest(&b)
	if len(ms) != 1 || !ms[0].OK || len(ms[0].Warnings) != ptMaxWarnings+1 {
		t.Fatalf("%d measurements, ok=%v, %d warnings", len(ms), ms[0].OK, len(ms[0].Warnings))
	}
}
