package parsers

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// perftestSweep builds a capture of about size bytes: complete ib_write_bw
// client runs (banner, header block, addresses, one -a sweep 2 B … 8 MiB),
// one after another, printed with perftest's own format strings
// (RESULT_LINE, RESULT_FMT, REPORT_FMT with its literal tabs).
func perftestSweep(size int) []byte {
	const sep = "---------------------------------------------------------------------------------------\n"
	var run bytes.Buffer
	run.WriteString(sep + "                    RDMA_Write BW Test\n")
	run.WriteString(" Dual-port       : OFF\t\tDevice         : mlx5_0\n Number of qps   : 1\t\tTransport type : IB\n")
	run.WriteString(" Connection type : RC\t\tUsing SRQ      : OFF\n PCIe relax order: ON\t\tLock-free      : OFF\n")
	run.WriteString(" TX depth        : 128\n CQ Moderation   : 100\n Mtu             : 4096[B]\n Link type       : Ethernet\n")
	run.WriteString(" GID index       : 3\n Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n" + sep)
	run.WriteString(" local address: LID 0000 QPN 0x0108 PSN 0x63ad7d RKey 0x17eedf VAddr 0x007f760c947000\n")
	run.WriteString(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:255:255:05\n")
	run.WriteString(" remote address: LID 0000 QPN 0x0076 PSN 0xf3810c RKey 0x201600 VAddr 0x007fbb4c981000\n")
	run.WriteString(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:255:255:06\n" + sep)
	run.WriteString(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n")
	for b := 2; b <= 1<<23; b *= 2 {
		avg := 11000.0 * float64(b) / (float64(b) + 4096)
		fmt.Fprintf(&run, " %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f\n",
			b, 5000, avg*1.003, avg, avg*(1<<20)/float64(b)/1e6)
	}
	run.WriteString(sep)
	out := make([]byte, 0, size+run.Len())
	for len(out) < size {
		out = append(out, run.Bytes()...)
	}
	return out
}

// BenchmarkParsePerftest measures throughput on a 10 MB capture:
//
//	go test ./parsers -run '^$' -bench ParsePerftest -benchmem
func BenchmarkParsePerftest(b *testing.B) {
	data := perftestSweep(10 << 20)
	ms, _ := ParsePerftest(bytes.NewReader(data))
	if len(ms) == 0 || !ms[0].OK || len(ms[0].Samples) != 23 {
		b.Fatalf("generated capture parsed as %d measurements, first %+v", len(ms), ms[0])
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if _, err := ParsePerftest(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	// On a shared machine wall time says more about the neighbours than about
	// the parser; CPU seconds of this process (GC included) do not.
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// processCPU is the user+system CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
