package parsers

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ncclBenchLog builds a ~100 MB NCCL_DEBUG=INFO log by repeating a real
// capture (INFO lines with the result table inside), as a long job's log
// with many runs would look.
func ncclBenchLog(b *testing.B, size int) []byte {
	b.Helper()
	one, err := os.ReadFile(filepath.Join(ncclCaptureDir, "all_reduce_g4_debug_info.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Grow(size + len(one))
	for buf.Len() < size {
		buf.Write(one)
	}
	return buf.Bytes()
}

// ncclCPUTime is the process's user+system CPU time: on a shared machine
// wall-clock MB/s says more about the neighbours than about the parser.
func ncclCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkParseNCCLInfoLog100MB measures parse throughput on a 100 MB
// NCCL_DEBUG=INFO log: MB/s (wall clock) and cpu-MB/s (per CPU-second used,
// garbage collection included):
//
//	go test ./parsers -run '^$' -bench ParseNCCLInfoLog100MB -benchmem
func BenchmarkParseNCCLInfoLog100MB(b *testing.B) {
	data := ncclBenchLog(b, 100<<20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu0 := ncclCPUTime()
	for i := 0; i < b.N; i++ {
		ms, err := ParseNCCL(bytes.NewReader(data))
		if err != nil || len(ms) == 0 || !ms[0].OK || ms[0].Transport == nil {
			b.Fatalf("parse failed: %v", err)
		}
	}
	if cpu := ncclCPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}
