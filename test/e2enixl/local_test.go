package e2enixl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
)

// localScenario is two local processes, nixlbench over UCX (no RDMA here:
// shared memory and TCP on one host), READ and WRITE, through the etcd
// the test gives rdmabench (--etcd), so that what the run leaves there
// can be read.
const localScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: nixl-local
  description: "real nixlbench between two local processes, ETCD runtime"
backend: local
pools:
  - {name: prefill}
  - {name: decode}
tests:
  - name: kv-read
    tool: nixlbench
    from: decode
    to: prefill
    requires: tcp
    args: {backend: UCX, op: READ, minSize: 1MiB, maxSize: 4MiB, extra: ["--total_buffer_size=1073741824"]}
  - name: kv-write
    tool: nixlbench
    from: decode
    to: prefill
    requires: tcp
    args: {backend: UCX, op: WRITE, minSize: 1MiB, maxSize: 4MiB, extra: ["--total_buffer_size=1073741824"]}
`

// TestLocalUCX: `rdmabench run` of the real nixlbench between two local
// processes, both rendezvousing through the etcd's ETCD runtime, in an
// etcd that still holds what a killed run of the same group left (a stale
// //size made the next run fail "Rank 2 is greater than or equal to
// global size 2" while its partner waited at the start barrier). The run
// passes; afterwards neither a key nor a lease of it is left; every key
// the real tool wrote (its lock, rank keys on leases, barriers, messages)
// is listed. Then the same commands raw, and rdmabench again in the same
// etcd (the second run must pass as the first did), side by side.
func TestLocalUCX(t *testing.T) {
	needNixl(t)
	ctx := ctxT(t)
	srv, err := runetcd.Start(ctx, runetcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	const runID = "nixl-local"
	group := "rdmabench-" + runID + "-kv-read-r0-decode-0-prefill-0-0"
	stale, _ := c.Grant(ctx, 300)
	for k, lease := range map[string]clientv3.LeaseID{
		"xferbench/" + group + "//size": 0, "xferbench/" + group + "//rank/0": stale.ID, "xferbench/" + group + "//rank/1": stale.ID,
		"xferbench/" + group + "/msg+int_data/src=1/dst=0": 0,
	} {
		var opts []clientv3.OpOption
		if lease != 0 {
			opts = append(opts, clientv3.WithLease(lease))
		}
		if _, err := c.Put(ctx, k, "2", opts...); err != nil {
			t.Fatal(err)
		}
	}
	seen := watchKeys(ctx, c)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "nixl-local.yaml")
	if err := os.WriteFile(scenario, []byte(localScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	start := time.Now()
	code, stderr := rdmabench(t, "run", scenario, "--etcd", srv.URL, "--run-id", runID, "--out", out, "--html", "none")
	wall := time.Since(start)
	t.Logf("rdmabench run (exit %d, %.0f s):\n%s", code, wall.Seconds(), stderr)
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	for _, r := range rep.Results {
		if r.Verdict != schema.VerdictPass || len(r.Samples) != 3 {
			t.Errorf("%s: %s (%s), %d sizes", r.Test, r.Verdict, r.Reason, len(r.Samples))
		}
		if r.Transport == nil || r.Transport.Source != "ucx" || r.Transport.Kind == parsers.TransportUnknown {
			t.Errorf("%s: transport %+v; want UCX's own protocol tables to name it", r.Test, r.Transport)
		}
	}
	assertEtcdEmpty(t, ctx, c)
	raw := rawRuns(t, rep, srv.URL, "raw")
	// A second run in the same etcd, with the same run ID (so the same
	// groups): it must pass too, and it brackets the raw run in time, so
	// that the machine's drift shows beside the ratio.
	out2 := filepath.Join(dir, "run2")
	code2, stderr2 := rdmabench(t, "run", scenario, "--etcd", srv.URL, "--run-id", runID, "--out", out2, "--html", "none")
	t.Logf("second rdmabench run in the same etcd (exit %d):\n%s", code2, stderr2)
	rep2, err := schema.Load(filepath.Join(out2, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code2 != 0 {
		t.Errorf("second run: exit %d; want 0", code2)
	}
	keys := seen()
	after := assertEtcdEmpty(t, ctx, c)
	table := sideBySide(t, rep, raw, rep2)
	t.Logf("rdmabench vs raw, same commands, same machine:\n%s", table)
	if *record {
		recordCapture(t, "local-ucx", out, raw, keys, after, table, fmt.Sprintf("rdmabench run: %.0f s wall, exit %d", wall.Seconds(), code))
	}
}

// rdmabench runs the binary under test with the NIXL build first on PATH.
func rdmabench(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	} else if err != nil {
		t.Fatalf("rdmabench %v: %v", args, err)
	}
	return 0, stderr.String()
}

// watchKeys notes every key written under xferbench/ (and whether it held
// a lease) until the returned function is called, which lists them.
func watchKeys(ctx context.Context, c *clientv3.Client) func() []string {
	wctx, stop := context.WithCancel(ctx)
	ch := c.Watch(wctx, "xferbench/", clientv3.WithPrefix())
	var mu sync.Mutex
	keys := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for resp := range ch {
			for _, ev := range resp.Events {
				k := string(ev.Kv.Key)
				if ev.Type == clientv3.EventTypeDelete {
					continue
				}
				if ev.Kv.Lease != 0 {
					k += "  (on a lease)"
				}
				mu.Lock()
				keys[k] = true
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		out := make([]string, 0, len(keys))
		for k := range keys {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
}

// assertEtcdEmpty: no key under xferbench/ and no lease is left. It
// returns what it read, for the capture.
func assertEtcdEmpty(t *testing.T, ctx context.Context, c *clientv3.Client) []string {
	t.Helper()
	resp, err := c.Get(ctx, "xferbench/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		t.Errorf("key left in etcd after the run: %s", kv.Key)
	}
	leases, err := c.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Leases {
		t.Errorf("lease %x left in etcd after the run", l.ID)
	}
	return []string{fmt.Sprintf("keys under xferbench/: %d", len(resp.Kvs)), fmt.Sprintf("leases: %d", len(leases.Leases))}
}

// rawResult is one raw pair of processes: the initiator's and the
// target's output.
type rawResult struct {
	test, variant     string
	commands          []string
	initiator, target string
	measurement       parsers.Measurement
}

// rawRuns runs every result's two commands again by hand (not through
// rdmabench): the same argv and environment, a group of its own,
// initiator first, the target once it holds rank 0.
func rawRuns(t *testing.T, rep *schema.Report, etcdURL, tag string) []rawResult {
	var out []rawResult
	for _, r := range rep.Results {
		if len(r.Commands) != 2 {
			t.Fatalf("%s: %d commands", r.Test, len(r.Commands))
		}
		rr := rawResult{test: r.Test, variant: r.Variant}
		var procs [2]*exec.Cmd
		var outs [2]*syncBuf
		for i, line := range r.Commands {
			env, argv := splitCommand(line)
			for j, a := range argv {
				if g, ok := strings.CutPrefix(a, "--benchmark_group="); ok {
					argv[j] = "--benchmark_group=" + tag + "-" + g
				}
				if strings.HasPrefix(a, "--etcd_endpoints=") {
					argv[j] = "--etcd_endpoints=" + etcdURL
				}
			}
			rr.commands = append(rr.commands, strings.Join(append(env, argv...), " "))
			cmd := exec.Command(filepath.Join(prefix, "bin", argv[0]), argv[1:]...)
			cmd.Env = append(append(os.Environ(), env...), "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
			outs[i] = &syncBuf{}
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
			procs[i] = cmd
		}
		if err := procs[0].Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(outs[0].String(), "ETCD Runtime: Registered as rank 0") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if err := procs[1].Start(); err != nil {
			t.Fatal(err)
		}
		for i, p := range procs {
			done := make(chan error, 1)
			go func() { done <- p.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("raw %s side %d: %v\n%s", r.Test, i, err, outs[i].String())
				}
			case <-time.After(5 * time.Minute):
				_ = p.Process.Kill()
				t.Errorf("raw %s side %d did not end within 5 minutes", r.Test, i)
			}
		}
		rr.initiator, rr.target = outs[0].String(), outs[1].String()
		ms, err := parsers.Parse("nixlbench", strings.NewReader(rr.initiator))
		if err != nil || len(ms) == 0 || !ms[0].OK {
			t.Fatalf("raw %s: %v %+v", r.Test, err, ms)
		}
		rr.measurement = ms[0]
		out = append(out, rr)
	}
	return out
}

// splitCommand reads a report command line "endpoint$ K=V … argv…".
func splitCommand(line string) (env, argv []string) {
	_, rest, _ := strings.Cut(line, "$ ")
	for _, w := range strings.Fields(rest) {
		if len(argv) == 0 && strings.Contains(w, "=") && !strings.HasPrefix(w, "-") {
			env = append(env, w)
			continue
		}
		argv = append(argv, w)
	}
	return env, argv
}

// sideBySide is a table of B/W per size: through rdmabench, raw, through
// rdmabench again (after the raw run), and the ratio of the two rdmabench
// runs' mean to raw. The two rdmabench columns show how much the machine
// itself moved meanwhile.
func sideBySide(t *testing.T, rep *schema.Report, raw []rawResult, rep2 *schema.Report) string {
	bwOf := func(samples []parsers.Sample) map[int64]float64 {
		m := map[int64]float64{}
		for _, s := range samples {
			if s.BWAvgBps != nil {
				m[s.Bytes] = *s.BWAvgBps
			}
		}
		return m
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-6s %12s %12s %12s %8s\n", "test", "size", "rdmabench 1", "raw", "rdmabench 2", "ratio")
	for i, r := range rep.Results {
		rawBW := bwOf(raw[i].measurement.Samples)
		second := map[int64]float64{}
		if i < len(rep2.Results) && rep2.Results[i].Test == r.Test {
			second = bwOf(rep2.Results[i].Samples)
		}
		for _, s := range r.Samples {
			if s.BWAvgBps == nil || rawBW[s.Bytes] == 0 || second[s.Bytes] == 0 {
				t.Errorf("%s @%d: no figure in one of the runs", r.Test, s.Bytes)
				continue
			}
			mean := (*s.BWAvgBps + second[s.Bytes]) / 2
			fmt.Fprintf(&b, "%-10s %-6s %7.2f GB/s %7.2f GB/s %7.2f GB/s %8.2f\n", r.Test, schema.FormatSizeShort(s.Bytes),
				*s.BWAvgBps/8e9, rawBW[s.Bytes]/8e9, second[s.Bytes]/8e9, mean/rawBW[s.Bytes])
		}
	}
	return b.String()
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
