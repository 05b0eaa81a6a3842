package deepep

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
)

// standin puts the stand-in torch and deep_ep (testdata/standin) on
// PYTHONPATH and gives the probe a private TMPDIR, to see that it leaves
// nothing.
func standin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	std, _ := filepath.Abs(filepath.Join("testdata", "standin"))
	t.Setenv("PYTHONPATH", std)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return tmp
}

// freePort is a TCP port nothing listens on now, for MASTER_PORT.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type rank struct {
	out  bytes.Buffer
	code int
}

// small is a shape the stand-in exchanges in milliseconds.
var small = []string{"--hidden", "256", "--topk", "4", "--experts", "16", "--tokens", "64", "--ll-tokens", "16", "--iterations", "3"}

// ranks runs n ranks of the probe with torch.distributed's env contract,
// as rdmabench starts them (rank 0 first, on one host).
func ranks(t *testing.T, n int, limit time.Duration, args ...string) []*rank {
	t.Helper()
	port := freePort(t)
	out := make([]*rank, n)
	var wg sync.WaitGroup
	for r := range n {
		out[r] = &rank{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := []string{"MASTER_ADDR=127.0.0.1", fmt.Sprintf("MASTER_PORT=%d", port), fmt.Sprintf("RANK=%d", r),
				fmt.Sprintf("WORLD_SIZE=%d", n), fmt.Sprintf("LOCAL_RANK=%d", r)}
			o := Options{Args: append([]string{"--rendezvous-timeout", "20"}, args...), Limit: limit, Env: env,
				Stdout: &out[r].out, Stderr: &out[r].out}
			out[r].code = Run(context.Background(), o)
		}()
	}
	wg.Wait()
	return out
}

// TestProbeTwoRanks: both kernel sets over the stand-in, two ranks: rank
// 0 prints every rank's lines under its banner, the parser reads one
// measurement per rank and phase with the versions, nothing is left in
// TMPDIR.
func TestProbeTwoRanks(t *testing.T) {
	tmp := standin(t)
	rs := ranks(t, 2, time.Minute, small...)
	for i, r := range rs {
		if r.code != 0 {
			t.Fatalf("rank %d exit %d:\n%s", i, r.code, r.out.String())
		}
	}
	if rs[1].out.Len() != 0 {
		t.Errorf("rank 1 printed (only rank 0 should):\n%s", rs[1].out.String())
	}
	ms, err := parsers.Parse(Program, &rs[0].out)
	if err != nil {
		t.Fatal(err)
	}
	var tests []string
	for _, m := range ms {
		if !m.OK || m.Tool != Program || len(m.Samples) != 1 || *m.Samples[0].BWAvgBps <= 0 || m.Info["deep_ep"] != "1.2.1+standin" ||
			m.Info["deep_ep_api"] != "V1" || m.Ranks != 2 || m.Info["check"] != "passed" {
			t.Errorf("%+v", m)
		}
		tests = append(tests, m.Side+" "+m.Test)
	}
	want := "rank 0 normal dispatch (FP8),rank 0 normal combine (BF16),rank 1 normal dispatch (FP8),rank 1 normal combine (BF16)," +
		"rank 0 low_latency dispatch (FP8),rank 0 low_latency combine (BF16),rank 0 low_latency dispatch+combine (FP8)," +
		"rank 1 low_latency dispatch (FP8),rank 1 low_latency combine (BF16),rank 1 low_latency dispatch+combine (FP8)"
	if got := strings.Join(tests, ","); got != want {
		t.Errorf("measurements:\n%s\nwant\n%s", got, want)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestProbeKernelSetFails: a kernel set that fails on every rank is said
// by rank 0, once per distinct failure, beside the other set's results;
// every rank exits 1.
func TestProbeKernelSetFails(t *testing.T) {
	standin(t)
	t.Setenv("RDMABENCH_STANDIN_FAIL", "low_latency")
	rs := ranks(t, 2, time.Minute, small...)
	if rs[0].code != 1 || rs[1].code != 1 {
		t.Fatalf("exit %d, %d:\n%s", rs[0].code, rs[1].code, rs[0].out.String())
	}
	ms, err := parsers.Parse(Program, &rs[0].out)
	if err != nil {
		t.Fatal(err)
	}
	var ok, failed int
	for _, m := range ms {
		switch {
		case m.OK && strings.HasPrefix(m.Test, "normal "):
			ok++
		case !m.OK && m.ErrorClass == parsers.ClassToolError && strings.Contains(m.Error, "low_latency: rank"):
			failed++
		}
	}
	if ok != 4 || failed != 2 {
		t.Errorf("%d normal results, %d low_latency failures (want 4, 2):\n%+v", ok, failed, ms)
	}
}

// TestProbeNeedsTheEnvContract: without MASTER_ADDR and the rest the probe
// says which are missing and exits 2.
func TestProbeNeedsTheEnvContract(t *testing.T) {
	standin(t)
	for _, k := range []string{"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"} {
		t.Setenv(k, "")
	}
	var out bytes.Buffer
	code := Run(context.Background(), Options{Args: small, Limit: time.Minute, Stdout: &out, Stderr: &out})
	if code != 2 || !strings.Contains(out.String(), "MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK not set") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

// TestProbeRendezvousTimeout: a rank whose rank 0 never comes gives up at
// its rendezvous timeout, naming where it looked.
func TestProbeRendezvousTimeout(t *testing.T) {
	standin(t)
	var out bytes.Buffer
	env := []string{"MASTER_ADDR=127.0.0.1", fmt.Sprintf("MASTER_PORT=%d", freePort(t)), "RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1"}
	code := Run(context.Background(), Options{Args: append([]string{"--rendezvous-timeout", "1"}, small...), Limit: time.Minute,
		Env: env, Stdout: &out, Stderr: &out})
	if code != 1 || !strings.Contains(out.String(), "rendezvous at 127.0.0.1:") || !strings.Contains(out.String(), "as rank 1 of 2 failed") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	ms, _ := parsers.Parse(Program, &out)
	if len(ms) != 1 || ms[0].ErrorClass != parsers.ClassTimeout {
		t.Errorf("parsed as %+v, want one timeout", ms)
	}
}

// TestProbeWatchdog: ranks stuck in a kernel are ended at the limit with
// 124, their scripts removed.
func TestProbeWatchdog(t *testing.T) {
	tmp := standin(t)
	t.Setenv("RDMABENCH_STANDIN_HANG", "1")
	rs := ranks(t, 2, 3*time.Second, small...)
	if rs[0].code != 124 || !strings.Contains(rs[0].out.String(), "did not finish within 3s (a rank missing at the rendezvous, or a DeepEP kernel waiting on a peer)") {
		t.Fatalf("exit %d:\n%s", rs[0].code, rs[0].out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestProbeRefusesBadShapes: the probe's own argument checks, exit 2.
func TestProbeRefusesBadShapes(t *testing.T) {
	standin(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--hidden", "100"}, "--hidden a multiple of 128"},
		{[]string{"--topk", "9", "--experts", "8"}, "--topk 9 is more than --experts 8"},
		{[]string{"--tokens", "0"}, "--tokens must be positive"},
	} {
		var out bytes.Buffer
		code := Run(context.Background(), Options{Args: c.args, Limit: time.Minute, Stdout: &out, Stderr: &out})
		if code != 2 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: exit %d:\n%s", c.args, code, out.String())
		}
	}
}

// TestFindReportsDeepEP: --find names the interpreter, torch, NCCL and
// deep_ep with its API; without torch it says so.
func TestFindReportsDeepEP(t *testing.T) {
	standin(t)
	var out bytes.Buffer
	Find(context.Background(), &out)
	for _, want := range []string{"python-found-by=PATH", "torch=2.11.0+standin", "nccl=2.28.9", "deep_ep-version=1.2.1+standin", "deep_ep-api=V1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--find lacks %q:\n%s", want, out.String())
		}
	}
	t.Setenv("PYTHONPATH", t.TempDir())
	out.Reset()
	Find(context.Background(), &out)
	if !strings.Contains(out.String(), "torch=notfound") || !strings.Contains(out.String(), "torch-error=No module named 'torch'") {
		t.Errorf("without torch:\n%s", out.String())
	}
}
