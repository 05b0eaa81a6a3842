package nccl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/etcd"
)

// standin builds the probe (CGO_ENABLED=0, as it ships) and the stand-in
// libcuda.so.1 and libnccl.so.2 (testdata/standin, our own C) into one
// folder; it skips without a C compiler.
func standin(t *testing.T, cflags ...string) (dir string) {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc: the stand-in libraries cannot be built")
	}
	dir = t.TempDir()
	for lib, src := range map[string]string{"libcuda.so.1": "cuda.c", "libnccl.so.2": "nccl.c"} {
		args := append([]string{"-O2", "-Wall", "-shared", "-fPIC", "-o", filepath.Join(dir, lib), filepath.Join("testdata", "standin", src)}, cflags...)
		out, err := exec.Command(cc, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("build %s: %v\n%s", lib, err, out)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, Program), "../../cmd/rdmabench-nccl")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	return dir
}

// ranks runs n ranks of the probe through an embedded etcd, rank 0's
// output returned, every rank's error joined.
func ranks(t *testing.T, dir, url, key string, n int, args ...string) (string, error) {
	t.Helper()
	out, errs := eachRank(t, dir, url, key, n, args...)
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// eachRank runs n ranks as ranks does and returns rank 0's output with
// every rank's own error, for tests where which rank fails first is a race.
func eachRank(t *testing.T, dir, url, key string, n int, args ...string) (string, []error) {
	t.Helper()
	outs := make([]bytes.Buffer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(dir, Program), append([]string{
				"--rank", fmt.Sprint(r), "--ranks", fmt.Sprint(n), "--device", fmt.Sprint(r),
				"--etcd", url, "--key", key, "--time-limit", "50s"}, args...)...)
			// The loader finds both stand-ins, as it would the image's
			// libraries: the probe's own lookup ends at the loader.
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET", "TMPDIR="+dir)
			cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
			if err := cmd.Run(); err != nil {
				errs[r] = fmt.Errorf("rank %d: %v\n%s", r, err, outs[r].String())
			}
		}()
	}
	wg.Wait()
	return outs[0].String(), errs
}

// TestProbeOverStandins runs the probe as rdmabench runs it, four ranks
// meeting through etcd, over the stand-in libraries: every collective
// parses as the probe's, with four ranks, checked data, NCCL's log carried
// in the output and no etcd key or log file left.
func TestProbeOverStandins(t *testing.T) {
	dir := standin(t)
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, c := range Collectives() {
		out, err := ranks(t, dir, srv.URL, "/rdmabench/test/"+c, 4, "--collective", c, "-b", "64K", "-e", "256K", "-n", "3", "-w", "1")
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		ms, err := parsers.Parse(Program, strings.NewReader(out))
		if err != nil || len(ms) != 1 || !ms[0].OK {
			t.Fatalf("%s: %v %+v\n%s", c, err, ms, out)
		}
		m := ms[0]
		if m.Tool != Program || m.Test != c || m.Ranks != 4 || len(m.Samples) != 3 || m.Info["nccl_version"] == "" {
			t.Errorf("%s: tool %q test %q ranks %d samples %d info %v", c, m.Tool, m.Test, m.Ranks, len(m.Samples), m.Info)
		}
		for _, s := range m.Samples {
			if s.Wrong == nil || *s.Wrong != 0 || s.BusBWBps == nil || *s.BusBWBps <= 0 && c != "broadcast" && c != "sendrecv" {
				t.Errorf("%s %d B: wrong %v busbw %v", c, s.Bytes, s.Wrong, s.BusBWBps)
			}
		}
		if !strings.Contains(out, "NCCL INFO NCCL version 2.28.9+standin") {
			t.Errorf("%s: NCCL's log is not in the output:\n%s", c, out)
		}
	}
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if resp, err := cli.Get(context.Background(), "/rdmabench/", clientOpts()...); err != nil || resp.Count != 0 {
		t.Errorf("keys left in etcd: %v %v", resp, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "rdmabench-nccl-*.log")); len(left) > 0 {
		t.Errorf("NCCL log files left: %v", left)
	}
}

// TestProbeAlltoallAPI: alltoall is NCCL's ncclAlltoAll where the library
// has it (2.28 on, as nccl-tests calls it), else send/recv in a group; the
// banner says which, and both give the right data.
func TestProbeAlltoallAPI(t *testing.T) {
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for api, cflags := range map[string][]string{"ncclAlltoAll": nil, "send/recv": {"-DSTANDIN_BEFORE_2_28"}} {
		dir := standin(t, cflags...)
		out, err := ranks(t, dir, srv.URL, "/rdmabench/a2a/"+api, 3, "--collective", "alltoall", "-b", "96K", "-e", "96K", "-n", "2", "-w", "1")
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		ms, err := parsers.Parse(Program, strings.NewReader(out))
		if err != nil || len(ms) != 1 || !ms[0].OK || ms[0].Info["alltoall_api"] != api || *ms[0].Samples[0].Wrong != 0 {
			t.Errorf("%s: %v %+v\n%s", api, err, ms, out)
		}
	}
}

// TestProbeRankWithoutRankZero: a rank whose rank 0 never comes says so
// within its bound, naming the key and the etcd.
func TestProbeRankWithoutRankZero(t *testing.T) {
	dir := standin(t)
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cmd := exec.Command(filepath.Join(dir, Program), "--rank", "1", "--ranks", "2", "--etcd", srv.URL, "--key", "/rdmabench/none",
		"--rendezvous-timeout", "3s", "--time-limit", "30s")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	out, err := cmd.CombinedOutput()
	// On a loaded host the etcd read itself may be what runs out of time:
	// then the probe says the id "could not be read", naming etcd's error.
	said := strings.Contains(string(out), "rank 0's NCCL id did not appear at /rdmabench/none") ||
		strings.Contains(string(out), "rank 0's NCCL id could not be read at /rdmabench/none")
	if err == nil || !said {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestProbeRefusesBadArguments: usage errors name the flag and exit 2,
// before any library is loaded.
func TestProbeRefusesBadArguments(t *testing.T) {
	dir := standin(t)
	for args, want := range map[string]string{
		"--collective all_to_all":     `unknown collective "all_to_all"`,
		"--ranks 2":                   "several ranks need --etcd and --key",
		"-b 4M -e 1M":                 "want 0 < b <= e",
		"-d float17":                  `unknown data type "float17"`,
		"-b 1Q":                       `-b "1Q"`,
		"--rank 3 --ranks 2 --etcd x": "rank 3 of 2",
	} {
		cmd := exec.Command(filepath.Join(dir, Program), strings.Fields(args)...)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !strings.Contains(string(out), want) || err == nil || !asExit(err, &exit) {
			t.Errorf("%s: %v\n%s", args, err, out)
		}
	}
}

func asExit(err error, e **exec.ExitError) bool {
	x, ok := err.(*exec.ExitError)
	*e = x
	return ok
}

func clientOpts() []clientv3.OpOption {
	return []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly()}
}
