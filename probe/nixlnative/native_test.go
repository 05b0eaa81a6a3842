package nixlnative

import (
	"bytes"
	"context"
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

// bundle builds what a pod's bundle holds for the NIXL probe (the static
// rdmabench-nixl and rdmabench-nccl, which hosts the native probe, as they
// ship: CGO_ENABLED=0) and the stand-in libnixl_capi.so (our C: its agents
// serve their registered DRAM over TCP, as the Python stand-in's do). The
// image's python3 is the Python stand-in package's, which says where
// NIXL's library is unless $RDMABENCH_NIXL_CAPI does. It skips without gcc
// or python3.
func bundle(t *testing.T) (dir, capiLib string) {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc: the stand-in libnixl_capi.so cannot be built")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for the Python target")
	}
	dir = t.TempDir()
	capiLib = filepath.Join(dir, "libnixl_capi.so")
	if out, err := exec.Command(cc, "-O2", "-Wall", "-shared", "-fPIC", "-o", capiLib,
		filepath.Join("..", "nixl", "testdata", "standin", "nixl_capi.c")).CombinedOutput(); err != nil {
		t.Fatalf("build the stand-in: %v\n%s", err, out)
	}
	for _, p := range []string{"rdmabench-nixl", "rdmabench-nccl"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, p), "../../cmd/"+p)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", p, err, out)
		}
	}
	std, _ := filepath.Abs(filepath.Join("..", "nixl", "testdata", "standin"))
	t.Setenv("PYTHONPATH", std)
	t.Setenv("RDMABENCH_PYTHON", "")
	return dir, capiLib
}

type result struct {
	out, errs string
	code      int
}

// pair runs the native target and initiator, both started as rdmabench
// starts them (rdmabench-nixl --native, from the bundle's folder).
func pair(t *testing.T, dir, url, key string, env []string, args ...string) (target, initiator result) {
	t.Helper()
	var wg sync.WaitGroup
	for _, s := range []struct {
		role string
		into *result
	}{{"target", &target}, {"initiator", &initiator}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			argv := append([]string{"--role", s.role, "--etcd", url, "--key", key, "--rendezvous-timeout", "30", "--native"}, args...)
			cmd := exec.CommandContext(ctx, filepath.Join(dir, "rdmabench-nixl"), argv...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			cmd.Env = append(os.Environ(), env...)
			err := cmd.Run()
			s.into.out, s.into.errs = out.String(), errb.String()
			if ee, ok := err.(*exec.ExitError); ok {
				s.into.code = ee.ExitCode()
			} else if err != nil {
				s.into.code = -1
				s.into.errs += err.Error()
			}
		}()
	}
	wg.Wait()
	return target, initiator
}

func startEtcd(t *testing.T) *etcd.Server {
	t.Helper()
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func keysLeft(t *testing.T, url, prefix string) int64 {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// Both sides measure through NIXL's C API: nixlbench's table the parser
// reads, the data checked, UCX made as nixlbench makes it, every request
// posted through the C API, the target ending on the initiator's word, and
// no key left in etcd.
func TestNativeProbeMeasures(t *testing.T) {
	dir, capiLib := bundle(t)
	srv := startEtcd(t)
	key := "/rdmabench/test/native"
	tgt, ini := pair(t, dir, srv.URL, key, []string{CAPIEnv + "=" + capiLib},
		"--min-block", "4096", "--max-block", "65536", "--iters", "40", "--warmup", "3", "--regions", "2", "--blocks", "3")
	if tgt.code != 0 || ini.code != 0 {
		t.Fatalf("target %d, initiator %d\ntarget: %s%s\ninitiator: %s%s", tgt.code, ini.code, tgt.out, tgt.errs, ini.out, ini.errs)
	}
	for _, want := range []string{"loop=native", "nixl-capi=" + capiLib, "# stand-in: UCX created with num_threads=0,num_workers=2",
		"Timed calls", "nixl_capi_post_xfer_req", "Backend parameters (--backend-param)                        : num_workers=2,num_threads=0"} {
		if !strings.Contains(ini.out, want) {
			t.Errorf("initiator's output lacks %q:\n%s", want, ini.out)
		}
	}
	// 5 block sizes x (40 timed + 3 warm-up + 1 data check) posts.
	if want := "# stand-in: 220 nixl_capi_post_xfer_req calls"; !strings.Contains(ini.errs, want) {
		t.Errorf("initiator's stderr lacks %q: %s", want, ini.errs)
	}
	for _, want := range []string{"role=target loop=native", "# target: 2 regions of 196608 B in DRAM (device 0) serve rdmabench-initiator",
		"# target: done after 221 notifications"} {
		if !strings.Contains(tgt.out, want) {
			t.Errorf("target's output lacks %q:\n%s%s", want, tgt.out, tgt.errs)
		}
	}
	ms, err := parsers.ParseNixlbench(strings.NewReader(ini.out))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Fatalf("%d measurements, want 1", len(ms))
	}
	m := ms[0]
	if m.Tool != "rdmabench-nixl" || m.Info["loop"] != "native" || m.Info["as_nixlbench"] != "nixlbench's" || m.Info["native"] == "" {
		t.Errorf("measurement %s info %v", m.Tool, m.Info)
	}
	if len(m.Samples) != 5 {
		t.Fatalf("%d rows, want 5 (4 KiB to 64 KiB)", len(m.Samples))
	}
	for i, s := range m.Samples {
		if s.Bytes != int64(4096)<<i || s.Batch != 6 || s.BWAvgBps == nil || *s.BWAvgBps <= 0 {
			t.Errorf("row %d: %+v", i, s)
		}
	}
	if n := keysLeft(t, srv.URL, key); n != 0 {
		t.Errorf("%d keys left under %s", n, key)
	}
}

// A transfer that reports DONE with the wrong bytes fails the run, naming
// the block size; one whose status fails names NIXL's status and the
// target learns why; nothing is left in etcd.
func TestNativeInitiatorFailures(t *testing.T) {
	dir, capiLib := bundle(t)
	srv := startEtcd(t)
	for _, tc := range []struct {
		name, env, want string
		targetCode      int
		targetSays      string
	}{
		// The sweep goes on past bad data, as the Python probe's: the
		// target ends on the initiator's word, the initiator fails at the end.
		{"corrupt", "NIXL_STANDIN_CORRUPT=1", "READ of 4096 B blocks: the data did not arrive (region 0 byte 0: got", 0, "done after"},
		{"status", "NIXL_STANDIN_STATUS_ERR=1", "transfer to rdmabench-target: NIXL_CAPI_ERROR_BACKEND", 1,
			// The target says "the initiator failed: WHY" (read while it
			// waits for the initiator's key) or "the initiator ended before
			// it was done after N notifications: WHY" (read while serving).
			": transfer to rdmabench-target: NIXL_CAPI_ERROR_BACKEND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "/rdmabench/test/" + tc.name
			tgt, ini := pair(t, dir, srv.URL, key, []string{CAPIEnv + "=" + capiLib, tc.env},
				"--min-block", "4096", "--max-block", "8192", "--iters", "5", "--warmup", "1")
			if ini.code != 1 || !strings.Contains(ini.errs, "rdmabench-nixl: initiator: "+tc.want) {
				t.Errorf("initiator exit %d, want 1 saying %q:\n%s%s", ini.code, tc.want, ini.out, ini.errs)
			}
			if tgt.code != tc.targetCode || !strings.Contains(tgt.out+tgt.errs, tc.targetSays) {
				t.Errorf("target exit %d, want %d saying %q:\n%s%s", tgt.code, tc.targetCode, tc.targetSays, tgt.out, tgt.errs)
			}
			deadline := time.Now().Add(3 * leaseTTL * time.Second)
			for keysLeft(t, srv.URL, key) != 0 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
			if n := keysLeft(t, srv.URL, key); n != 0 {
				t.Errorf("%d keys left under %s past the leases' expiry", n, key)
			}
		})
	}
}

// Bad input is refused before anything starts: exit 2 and what to do.
func TestNativeInitiatorRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/k", "--no-notify"}, "drop --no-notify"},
		{[]string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/k", "--vram-alloc", "torch"}, "drop --native to time torch's allocator"},
		{[]string{"--role", "middle", "--etcd", "http://127.0.0.1:1", "--key", "/k"}, "--role must be target or initiator"},
		{[]string{"--role", "target", "--etcd", "http://127.0.0.1:1", "--key", "/k", "--buffer-size", "-1"}, "--buffer-size must be >= 0"},
		{[]string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/k", "--min-block", "0"}, "must be positive"},
		{[]string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/k", "--op", "SEND"}, "--op must be READ or WRITE"},
	} {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 saying %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// Where the image's NIXL has no C API, the run says where it looked and
// what to set, and tells the target.
func TestNativeInitiatorWithoutTheCAPI(t *testing.T) {
	dir, _ := bundle(t)
	srv := startEtcd(t)
	missing := filepath.Join(t.TempDir(), "libnixl_capi.so")
	tgt, ini := pair(t, dir, srv.URL, "/rdmabench/test/nocapi", []string{CAPIEnv + "=" + missing}, "--min-block", "4096", "--max-block", "4096")
	if ini.code != 1 || !strings.Contains(ini.errs, "cannot load "+missing) || !strings.Contains(ini.errs, "set "+CAPIEnv) {
		t.Errorf("initiator exit %d:\n%s", ini.code, ini.errs)
	}
	if tgt.code != 1 {
		t.Errorf("target exit %d, want 1:\n%s%s", tgt.code, tgt.out, tgt.errs)
	}
}

// Where the image's python3 imports nixl but maps no libnixl (a NIXL this
// probe cannot place), the run says so and what to set, rather than load
// whatever libnixl_capi.so the loader finds.
func TestNativeProbeWithoutLibnixl(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	std, _ := filepath.Abs(filepath.Join("..", "nixl", "testdata", "standin"))
	t.Setenv("PYTHONPATH", std) // the stand-in package loads no libnixl.so
	t.Setenv(CAPIEnv, "")
	srv := startEtcd(t)
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"--role", "target", "--etcd", srv.URL, "--key", "/rdmabench/test/nolib"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "imported nixl but mapped no libnixl.so: set "+CAPIEnv) {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
