package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
)

// nixlMask hides what differs between runs and hosts (every number, the
// host name) and keeps the layout: each line's text, spacing and order;
// rows of the table mask alike, so a run of equal masked lines is one.
func nixlMask(out string) []string {
	num := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	host := regexp.MustCompile(`hostname \S+`)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = host.ReplaceAllString(l, "hostname H")
		// Numbers of other lengths shift the padding after them: mask a
		// number with its padding as one "N" cell.
		l = regexp.MustCompile(`[0-9]+(\.[0-9]+)? *`).ReplaceAllStringFunc(l, func(s string) string {
			if strings.HasSuffix(s, " ") {
				return "N_"
			}
			return "N"
		})
		l = num.ReplaceAllString(l, "N")
		if len(lines) > 0 && lines[len(lines)-1] == l {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// nixlShape is a parsed output's structure without its figures.
func nixlShape(t *testing.T, out string) string {
	t.Helper()
	ms, err := parsers.ParseNixlbench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range ms {
		var keys []string
		for k := range m.Info {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "tool=%s test=%s ok=%v class=%q op=%s backend=%s info=%v samples>0=%v\n",
			m.Tool, m.Test, m.OK, m.ErrorClass, m.Op, m.Backend, keys, len(m.Samples) > 0)
		for _, s := range m.Samples {
			js, _ := json.Marshal(s)
			var fields map[string]any
			_ = json.Unmarshal(js, &fields)
			var fk []string
			for k := range fields {
				fk = append(fk, k)
			}
			sort.Strings(fk)
			fmt.Fprintf(&b, "  sample fields %v\n", fk)
			break
		}
	}
	return b.String()
}

// TestNixlStandinLayoutMatchesRealH200 runs the stand-in as the real
// nixlbench ran on an H200 (ASIO runtime, two processes on one host, UCX,
// DRAM→DRAM, WRITE) and checks its initiator's output, numbers masked, is
// the real capture's layout line for line, and that the parser reads both
// to the same structure. Sweep and iterations are smaller (the masked
// values and row count do not matter); the VRAM captures differ only by
// nixlbench's stderr NEURON line, which the stand-in (no GPU) never prints.
func TestNixlStandinLayoutMatchesRealH200(t *testing.T) {
	standins(t)
	real, err := os.ReadFile("../testdata/gpu/h200-nixl-rdmabench/raw-direct/dram_write.txt")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	args := []string{"--runtime_type=ASIO", "--backend=UCX", "--total_buffer_size=1073741824",
		"--initiator_seg_type=DRAM", "--target_seg_type=DRAM", "--op_type=WRITE",
		"--max_block_size=65536", "--num_iter=100", "--warmup_iter=10", fmt.Sprintf("--asio_port=%d", port)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out0, out1 bytes.Buffer
	c0 := exec.CommandContext(ctx, "nixlbench", args...)
	c0.Stdout = &out0
	if err := c0.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the initiator binds first, as in the capture
	c1 := exec.CommandContext(ctx, "nixlbench", args...)
	c1.Stdout = &out1
	if err := c1.Run(); err != nil {
		t.Fatalf("target: %v\n%s", err, out1.String())
	}
	if err := c0.Wait(); err != nil {
		t.Fatalf("initiator: %v\n%s", err, out0.String())
	}
	got, want := nixlMask(out0.String()), nixlMask(string(real))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stand-in layout differs from the real H200 capture:\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The target's lines as well (its own capture, beside the initiator's).
	realT, err := os.ReadFile("../testdata/gpu/h200-nixl-rdmabench/raw-direct/dram_write_target.txt")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := nixlMask(out1.String()), nixlMask(string(realT)); !reflect.DeepEqual(g, w) {
		t.Errorf("stand-in target output differs:\n got:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	if g, w := nixlShape(t, out0.String()), nixlShape(t, string(real)); g != w {
		t.Errorf("parsed structure differs:\n stand-in: %s\n real:     %s", g, w)
	}
}

// TestNixlRealH200Captures: every real capture (run directly and through
// rdmabench) parses to one READ/WRITE UCX measurement of 15 rows, 4 KiB to
// 64 MiB, with the initiator's bandwidth as written (GB/s = 1e9 B/s).
func TestNixlRealH200Captures(t *testing.T) {
	files, _ := filepath.Glob("../testdata/gpu/h200-nixl*/*.txt")
	more, _ := filepath.Glob("../testdata/gpu/h200-nixl-rdmabench/raw-direct/*.txt")
	raw, _ := filepath.Glob("../testdata/gpu/h200-nixl-rdmabench/rdmabench/raw/*/*initiator.out")
	files = append(append(files, more...), raw...)
	n := 0
	for _, f := range files {
		base := filepath.Base(f)
		if !strings.HasPrefix(base, "dram_") && !strings.HasPrefix(base, "vram_") && !strings.HasSuffix(base, "initiator.out") || strings.Contains(base, "_target") {
			continue
		}
		n++
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := parsers.ParseNixlbench(bytes.NewReader(b))
		if err != nil || len(ms) != 1 {
			t.Fatalf("%s: %v, %d measurements", f, err, len(ms))
		}
		m := ms[0]
		op := "WRITE"
		if strings.Contains(f, "read") {
			op = "READ"
		}
		if !m.OK || m.Op != op || m.Backend != "UCX" || len(m.Samples) != 15 {
			t.Errorf("%s: ok=%v op=%s backend=%s rows=%d (%s)", f, m.OK, m.Op, m.Backend, len(m.Samples), m.Error)
			continue
		}
		if m.Samples[0].Bytes != 4096 || m.Samples[14].Bytes != 64<<20 || m.Samples[14].BWAvgBps == nil || *m.Samples[14].BWAvgBps <= 0 {
			t.Errorf("%s: rows %d..%d, last bw %v", f, m.Samples[0].Bytes, m.Samples[14].Bytes, m.Samples[14].BWAvgBps)
		}
	}
	if n != 4+4+4 {
		t.Errorf("read %d captures, want 12", n)
	}
}

// nixlLogLine is a line UCX (UCX_PROTO_INFO tables, "[time] [host:pid]")
// or NIXL's own log ("I1125 05:17:09.834926 …") printed between
// nixlbench's lines: the real tool's transports say them, a TCP stand-in
// has none to say.
var nixlLogLine = regexp.MustCompile(`^(\[[0-9]+\.[0-9]+\] \[|[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ )`)

func withoutLogs(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		// The stand-in names itself on stderr; the real tool has no such line.
		if !nixlLogLine.MatchString(l) && !strings.HasPrefix(l, "nixlbench: rdmabench stand-in") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestNixlStandinLayoutMatchesRealETCD runs the stand-in as the real
// nixlbench ran between the soft-RoCE VMs through rdmabench (ETCD runtime,
// the run's etcd; UCX and LIBFABRIC, DRAM READ, 64 KiB to 256 KiB) and
// checks both processes' output, numbers and the transports' own log
// lines masked, is the real capture's line for line, and that the parser
// reads both to the same structure.
func TestNixlStandinLayoutMatchesRealETCD(t *testing.T) {
	standins(t)
	dir := "../testdata/nixl/softroce-vms-ssh/rdmabench/raw"
	for _, backend := range []string{"UCX", "LIBFABRIC"} {
		t.Run(backend, func(t *testing.T) {
			glob, _ := filepath.Glob(filepath.Join(dir, "kv-"+strings.ToLower(backend)+"_*", "0-0-decode-0-initiator.out"))
			if len(glob) != 1 {
				t.Skipf("no real ETCD capture of %s under %s", backend, dir)
			}
			realI, err := os.ReadFile(glob[0])
			if err != nil {
				t.Fatal(err)
			}
			realT, err := os.ReadFile(filepath.Join(filepath.Dir(glob[0]), "0-0-prefill-0-target.out"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			srv, _ := startTestEtcd(ctx, t)
			args := []string{"--runtime_type=ETCD", "--etcd_endpoints=" + srv.URL, "--benchmark_group=fidelity-" + backend,
				"--backend=" + backend, "--op_type=READ", "--initiator_seg_type=DRAM", "--target_seg_type=DRAM",
				"--start_block_size=65536", "--max_block_size=262144", "--num_iter=32", "--total_buffer_size=67108864", "--warmup_iter=4"}
			if backend == "LIBFABRIC" {
				args = append(args, "--enable_pt")
			}
			var out0, out1 lockedBuffer // read while the process writes
			c0 := exec.CommandContext(ctx, "nixlbench", args...)
			c0.Env = append(os.Environ(), "NIXLBENCH_STANDIN_POLL_MS=50")
			c0.Stdout, c0.Stderr = &out0, &out0 // the capture holds both streams
			if err := c0.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(out0.String(), "rank 0") && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			c1 := exec.CommandContext(ctx, "nixlbench", args...)
			c1.Env = c0.Env
			c1.Stdout, c1.Stderr = &out1, &out1
			if err := c1.Run(); err != nil {
				t.Fatalf("target: %v\n%s", err, out1.String())
			}
			if err := c0.Wait(); err != nil {
				t.Fatalf("initiator: %v\n%s", err, out0.String())
			}
			for _, side := range []struct{ name, got, want string }{
				{"initiator", out0.String(), string(realI)}, {"target", out1.String(), string(realT)},
			} {
				got, want := nixlMask(withoutLogs(side.got)), nixlMask(withoutLogs(side.want))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: stand-in layout differs from the real ETCD capture:\n got:\n%s\nwant:\n%s", side.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			if g, w := nixlShape(t, out0.String()), nixlShape(t, string(realI)); g != w {
				t.Errorf("parsed structure differs:\n stand-in: %s\n real:     %s", g, w)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer a test may read while a process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
