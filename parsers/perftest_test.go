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
