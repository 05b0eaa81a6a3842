package parsers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestNixlbenchRealH200 parses the first real nixlbench output (NIXL
// 8770b655a, UCX 1.22.0, ASIO runtime, two processes on one H200 host:
// testdata/gpu/h200-nixl): every op and memory type gives 15 rows, 4 KiB
// to 64 MiB, and a bandwidth at the largest block.
func TestNixlbenchRealH200(t *testing.T) {
	for _, f := range []string{"dram_write.txt", "dram_read.txt", "vram_write.txt", "vram_read.txt"} {
		data, err := os.ReadFile(filepath.Join(gpuCaptureDir, "h200-nixl", f))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := ParseNixlbench(bytes.NewReader(data))
		if err != nil || len(ms) != 1 {
			t.Fatalf("%s: %v, %d measurements", f, err, len(ms))
		}
		m := ms[0]
		if !m.OK || len(m.Samples) != 15 || m.Samples[14].Bytes != 64<<20 || m.Samples[14].BWAvgBps == nil || *m.Samples[14].BWAvgBps <= 0 {
			t.Fatalf("%s: ok=%v %s %q, %d samples", f, m.OK, m.ErrorClass, m.Error, len(m.Samples))
		}
		t.Logf("%s: 64 MiB %.1f GB/s", f, *m.Samples[14].BWAvgBps/8e9)
	}
}
