package parsers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ncclHead is a current-generation banner and header (printf formats of
// nccl-tests 2.19), used to build edge cases around real layouts.
const ncclHead = `# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid   1350 on         vm device  0 [0000:00:06] NVIDIA H200
#  Rank  1 Group  0 Pid   1350 on         vm device  1 [0000:00:07] NVIDIA H200
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
`

func ncclRowText(size int, busbw float64, wrong, inWrong string) string {
	return fmt.Sprintf("%12d  %12d  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6s  %7.2f  %6.2f  %6.2f  %6s\n",
		size, size/4, "float", "sum", -1, 20.0, busbw, busbw, wrong, 20.0, busbw, busbw, inWrong)
}

const ncclFoot = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 10.5 \n#\n# Collective test concluded: all_reduce_perf\n#\n\n"

func TestNCCLTextEdgeCases(t *testing.T) {
	ok2 := ncclRowText(1024, 1.5, "0", "0") + ncclRowText(2048, 3.25, "0", "0")
	cases := []struct {
		name     string
		text     string
		runs     int
		ok       bool
		class    ErrorClass
		samples  int
		warnings string // substring expected among the warnings
	}{
		{name: "plain", text: ncclHead + ok2 + ncclFoot, runs: 1, ok: true, samples: 2},
		{name: "wrong elements", text: ncclHead + ncclRowText(1024, 1.5, "0", "3") + ncclFoot, runs: 1, class: ClassDataError, samples: 1},
		{name: "out of bounds", text: ncclHead + ok2 + strings.Replace(ncclFoot, "0 OK", "2 FAILED", 1), runs: 1, class: ClassDataError, samples: 2},
		{name: "failure in the middle of a row", runs: 1, class: ClassConnectionFailed, samples: 1,
			text: ncclHead + ncclRowText(1024, 1.5, "0", "0") + "        2048           512     float     sum      -1vm: Test NCCL failure common.cu:1550 'remote process exited or there was a network error / '\n .. vm pid 1: Test failure common.cu:1454\n"},
		{name: "rccl error above threshold", runs: 1, class: ClassDataError, samples: 1,
			text: "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n" +
				"     1048576        262144     float     sum    27.76   37.78   66.11  3e-02*    27.49   38.15   66.76  0e+00\n"},
		{name: "timeout", text: ncclHead + ncclRowText(1024, 1.5, "0", "0") + "all_reduce_perf: Test timeout (30s) common.cu:400\n", runs: 1, class: ClassTimeout, samples: 1},
		{name: "header then nothing", text: ncclHead, runs: 1, class: ClassTruncated},
		{name: "two runs in one capture", text: ncclHead + ok2 + ncclFoot + ncclHead + ncclRowText(4096, 7.0, "0", "0") + ncclFoot, runs: 2, ok: true, samples: 1},
		{name: "crlf and tag-output prefix", runs: 1, ok: true, samples: 2,
			text: prefixLines(ncclHead+ok2+ncclFoot, "[1,0]<stdout>:", "\r\n")},
		{name: "kubectl logs --timestamps", runs: 1, ok: true, samples: 2,
			text: prefixLines(ncclHead+ok2+ncclFoot, "2026-07-28T10:17:18.674123456Z ", "\n")},
		{name: "duplicate banner (no MPI)", runs: 1, ok: true, samples: 2, warnings: "banner printed twice",
			text: strings.Replace(ncclHead, "#\n# Using devices", "# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n# Using devices", 1) + ok2 + ncclFoot},
		{name: "no footer", runs: 1, ok: true, samples: 2, warnings: "no footer",
			text: ncclHead + ncclRowText(524288, 1.5, "0", "0") + ncclRowText(1048576, 3.25, "0", "0")},
		{name: "killed mid-sweep", text: ncclHead + ok2, runs: 1, class: ClassTruncated, samples: 2},
		{name: "killed mid-sweep, increment step", runs: 1, class: ClassTruncated, samples: 2,
			text: strings.Replace(ncclHead, "2(factor)", "1024(bytes)", 1) + ok2},
		{name: "no footer, last size rounded down to whole elements per rank", runs: 1, ok: true, samples: 2, warnings: "no footer",
			text: strings.Replace(ncclHead, "maxBytes 1048576", "maxBytes 1048575", 1) + ncclRowText(262140, 1.5, "0", "0") + ncclRowText(524280, 3.25, "0", "0")},
		{name: "no footer, maxBytes reduced", runs: 1, ok: true, samples: 2, warnings: "no footer",
			text: ncclHead + "#  Reducing maxBytes to 2048 due to memory limitation\n" + ok2},
		{name: "mpirun abort only", text: "mpirun noticed that process rank 3 with PID 0 on node n2 exited on signal 9 (Killed).\n", runs: 1, class: ClassToolError},
		{name: "garbage", text: "lorem ipsum\n12 monkeys\n", runs: 1, class: ClassUnknownFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms, err := ParseNCCL(strings.NewReader(c.text))
			if err != nil || len(ms) != c.runs {
				t.Fatalf("got %d measurements, err %v; want %d", len(ms), err, c.runs)
			}
			m := ms[len(ms)-1]
			if m.OK != c.ok || m.ErrorClass != c.class || len(m.Samples) != c.samples {
				t.Errorf("ok=%v class=%q (%s) samples=%d; want ok=%v class=%q samples=%d", m.OK, m.ErrorClass, m.Error, len(m.Samples), c.ok, c.class, c.samples)
			}
			if c.warnings != "" && !strings.Contains(strings.Join(m.Warnings, "\n"), c.warnings) {
				t.Errorf("warnings %q lack %q", m.Warnings, c.warnings)
			}
			if m.OK && (m.Ranks != 2 || m.AvgBusBWBps == nil || *m.AvgBusBWBps != 84e9) && !strings.HasPrefix(c.name, "no footer") {
				t.Errorf("ranks=%d avg=%v, want 2 and 84e9 bit/s", m.Ranks, m.AvgBusBWBps)
			}
		})
	}
}

func prefixLines(text, prefix, eol string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l + eol
	}
	return strings.Join(lines, "")
}

func TestNCCLJSONEdgeCases(t *testing.T) {
	full, err := os.ReadFile(filepath.Join(ncclCaptureDir, "all_reduce_g2.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(full)
	cases := []struct {
		name  string
		data  string
		ok    bool
		class ErrorClass
	}{
		{"as written", s, true, ClassNone},
		{"leading blank lines", "\n\n  " + s, true, ClassNone},
		{"crashed mid-file", s[:len(s)/2], false, ClassTruncated},
		{"wrong elements", strings.Replace(s, `"nwrong":0`, `"nwrong":5`, 1), false, ClassDataError},
		{"min bw failed", strings.Replace(s, `"okay":"unchecked"`, `"okay":"false"`, 1), false, ClassToolError},
		{"nan bandwidth", strings.Replace(s, `"alg_bw":0.000`, `"alg_bw":"nan","x":0.000`, 1), true, ClassNone},
		{"not a -J file", `{"hello": [1, 2, 3]}`, false, ClassNoResults},
		{"broken", `{"results": {]}`, false, ClassUnknownFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms, err := ParseNCCL(strings.NewReader(c.data))
			if err != nil || len(ms) != 1 {
				t.Fatalf("got %d measurements, err %v", len(ms), err)
			}
			m := ms[0]
			if m.OK != c.ok || m.ErrorClass != c.class {
				t.Errorf("ok=%v class=%q (%s), want ok=%v class=%q", m.OK, m.ErrorClass, m.Error, c.ok, c.class)
			}
			if c.ok && (len(m.Samples) != 26 || m.Ranks != 2 || m.Test != "all_reduce_perf") {
				t.Errorf("samples=%d ranks=%d test=%q", len(m.Samples), m.Ranks, m.Test)
			}
		})
	}
}
