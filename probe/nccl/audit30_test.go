package nccl

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/runner/etcd"
)

// TestAudit30AllGatherReduceScatterAligned: nccl-tests' all_gather.cu and
// reduce_scatter.cu (GetCollByteCount) align each rank's part to 16 bytes,
// base = (count/nranks) & ~(16/eltSize - 1), as alltoall.cu does: 1000
// floats over 3 ranks are 332 per rank, not 333 (and 1000 int8 over 3 ranks
// 320, not 333).
func TestAudit30AllGatherReduceScatterAligned(t *testing.T) {
	for _, name := range []string{"all_gather", "reduce_scatter"} {
		c, err := lookupCollective(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []struct{ count, elt, want int }{{1000, 4, 332}, {1000, 1, 320}, {1000, 8, 332}} {
			if _, _, p, _, _ := c.counts(k.count, k.elt, 3); p != k.want {
				t.Errorf("%s of %d elements of %d bytes over 3 ranks: %d per rank, want %d (16-byte aligned)", name, k.count, k.elt, p, k.want)
			}
		}
	}
}

// TestAudit30SignalStopsRankInInit: rank 0 blocked in ncclCommInitRank
// (its peer never comes) stops promptly on SIGTERM (the runner's kill) or
// SIGINT (Ctrl-C), instead of running on to --time-limit: NCCL's call
// cannot be cancelled, so the probe has to exit.
func TestAudit30SignalStopsRankInInit(t *testing.T) {
	dir := standin(t)
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		key := "/rdmabench/audit30/" + sig.String()
		cmd := exec.Command(filepath.Join(dir, Program), "--rank", "0", "--ranks", "2", "--etcd", srv.URL, "--key", key, "--time-limit", "60s")
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			resp, err := cli.Get(context.Background(), key)
			if err == nil && len(resp.Kvs) > 0 {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("rank 0 never published its id\n%s", out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // in ncclCommInitRank, waiting for rank 1
		_ = cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: rank 0 exited 0 after the signal", sig)
			}
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			if err := <-done; err == nil {
				t.Logf("killed rank 0 exited 0")
			}
			t.Errorf("%s: rank 0 in ncclCommInitRank still running 5 s after the signal (it runs on to --time-limit)\n%s", sig, out.String())
		}
	}
}

// TestAudit30WatchdogLeavesNoLog: when the watchdog ends a rank (exit 124),
// NCCL's log file (NCCL_DEBUG_FILE in TMPDIR, made by the re-exec) is
// removed as on every other path (and its last lines relayed); os.Exit
// skips Run's deferred logRelay.close, so the file stays behind and NCCL's
// lines since the last printed row never reach the output.
func TestAudit30WatchdogLeavesNoLog(t *testing.T) {
	dir := standin(t)
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// Big enough over the stand-in's sockets to outlast the 3 s limit.
	// Both ranks share the limit: whichever fires first exits 124 and the
	// other may see its peer go away (exit 1) before its own watchdog.
	out, errs := eachRank(t, dir, srv.URL, "/rdmabench/audit30/watchdog", 2, "-b", "64M", "-e", "64M", "-n", "1000", "-w", "0", "-c", "0", "--time-limit", "3s")
	fired := false
	for _, err := range errs {
		fired = fired || (err != nil && strings.Contains(err.Error(), "exit status 124"))
	}
	if !fired {
		t.Fatalf("want the watchdog's exit 124 from a rank: %v\n%s", errs, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "rdmabench-nccl-*.log")); len(left) > 0 {
		t.Errorf("NCCL log files left after the watchdog: %v", left)
	}
}

// TestAudit30UnreachableEtcdSaysSo: a rank whose etcd cannot be reached
// says so (fetch keeps the last Get error), rather than blaming rank 0
// ("is rank 0 running?") while the cause shows only in the etcd client's
// JSON warning.
func TestAudit30UnreachableEtcdSaysSo(t *testing.T) {
	dir := standin(t)
	cmd := exec.Command(filepath.Join(dir, Program), "--rank", "1", "--ranks", "2", "--etcd", "http://127.0.0.1:1", "--key", "/rdmabench/x",
		"--rendezvous-timeout", "2s", "--time-limit", "30s")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	out, _ := cmd.CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "rdmabench-nccl: rank 1:") && !strings.Contains(l, "refused") {
			t.Errorf("the probe's error hides that etcd is unreachable: %s", l)
		}
	}
}

// TestAudit30StepOverflowEnds: -f large enough that size×f wraps int64 to 0
// must not loop for ever on size-0 rows (size <= MaxBytes stays true).
func TestAudit30StepOverflowEnds(t *testing.T) {
	dir := standin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, Program), "-b", "4", "-e", "8", "-f", "4611686018427387904", "-n", "1", "-w", "0", "--time-limit", "30s")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	cmd.Cancel = func() error { return cmd.Process.Kill() } // SIGTERM is swallowed (see TestAudit30SignalStopsRankInInit)
	out, _ := cmd.Output()
	if ctx.Err() != nil || strings.Count(string(out), "\n") > 40 {
		t.Errorf("the size sweep did not end: %d lines in 10 s", strings.Count(string(out), "\n"))
	}
}
