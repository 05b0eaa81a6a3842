package nixl

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// standin puts the stand-in nixl package (testdata/standin) on PYTHONPATH
// and gives the probe a private TMPDIR, to see that it leaves nothing.
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

type side struct {
	out  bytes.Buffer
	code int
}

// startEtcd is a fresh etcd for one test, closed when the test ends.
func startEtcd(t *testing.T) *etcd.Server {
	t.Helper()
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// pair runs a target and an initiator over a fresh etcd (the initiator
// waits for the target's key, as rdmabench's readiness does).
func pair(t *testing.T, limit time.Duration, args ...string) (target, initiator *side) {
	t.Helper()
	// Closed before returning, not at the test's end: tests check that
	// nothing is left in TMPDIR once the pair is done.
	srv, err := etcd.Start(context.Background(), etcd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	return pairOn(srv.URL, "/rdmabench/test/"+t.Name(), limit, args, args)
}

// pairOn runs a target and an initiator at once through the etcd at url,
// under key, each with its own arguments.
func pairOn(url, key string, limit time.Duration, targetArgs, initiatorArgs []string) (target, initiator *side) {
	target, initiator = &side{}, &side{}
	var wg sync.WaitGroup
	for _, s := range []struct {
		role string
		args []string
		into *side
	}{{"target", targetArgs, target}, {"initiator", initiatorArgs, initiator}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"--role", s.role, "--etcd", url, "--key", key, "--rendezvous-timeout", "20"}, s.args...)
			o := Options{Args: args, Limit: limit, Stdout: &s.into.out, Stderr: &s.into.out}
			s.into.code = Run(context.Background(), o)
		}()
	}
	wg.Wait()
	return target, initiator
}

// TestProbeReadsKVBlocks: a READ sweep of vLLM-shaped requests (4 regions,
// 2 blocks each) over the stand-in: every size's data checked, the table
// parsed as the probe's with its versions, nothing left in TMPDIR.
func TestProbeReadsKVBlocks(t *testing.T) {
	tmp := standin(t)
	tgt, ini := pair(t, time.Minute, "--regions", "4", "--blocks", "2", "--min-block", "4096", "--max-block", "65536", "--iters", "8", "--warmup", "1")
	if tgt.code != 0 || ini.code != 0 {
		t.Fatalf("exit %d/%d\n%s\n%s", tgt.code, ini.code, tgt.out.String(), ini.out.String())
	}
	ms, err := parsers.Parse(Program, strings.NewReader(ini.out.String()))
	if err != nil || len(ms) != 1 || !ms[0].OK {
		t.Fatalf("%v %+v\n%s", err, ms, ini.out.String())
	}
	m := ms[0]
	if m.Tool != Program || m.Op != "READ" || m.Backend != "UCX" || len(m.Samples) != 5 || m.Info["nixl"] != "0.9.0+standin" {
		t.Errorf("tool %q op %q backend %q, %d samples, info %v", m.Tool, m.Op, m.Backend, len(m.Samples), m.Info)
	}
	for _, s := range m.Samples {
		if s.Batch != 8 || s.BWAvgBps == nil || *s.BWAvgBps <= 0 {
			t.Errorf("sample %+v: want a batch of 8 descriptors and a bandwidth", s)
		}
	}
	if !strings.Contains(tgt.out.String(), "# target: done after") {
		t.Errorf("target did not see the initiator finish:\n%s", tgt.out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestProbeAsNixlbenchPostsThroughTheBindings: --as-nixlbench times
// NIXL's binding calls on one prepared transfer, each post carrying its
// notification: the target counts 2 sizes × (8 timed + 1 warm-up + 1
// checked) + the final one = 21, the config says which calls were timed.
func TestProbeAsNixlbenchPostsThroughTheBindings(t *testing.T) {
	standin(t)
	tgt, ini := pair(t, time.Minute, "--as-nixlbench", "--min-block", "4096", "--max-block", "8192", "--iters", "8", "--warmup", "1")
	if tgt.code != 0 || ini.code != 0 {
		t.Fatalf("exit %d/%d\n%s\n%s", tgt.code, ini.code, tgt.out.String(), ini.out.String())
	}
	ms, err := parsers.Parse(Program, strings.NewReader(ini.out.String()))
	if err != nil || len(ms) != 1 || !ms[0].OK || len(ms[0].Samples) != 2 {
		t.Fatalf("%v %+v\n%s", err, ms, ini.out.String())
	}
	if got := ms[0].Info["timed_calls"]; got != "NIXL's bindings (postXferReq, getXferStatus)" {
		t.Errorf("timed calls %q", got)
	}
	if got := ms[0].Info["notification_per_request"]; got != "0xBEEF" {
		t.Errorf("notification per request %q, want nixlbench's 0xBEEF", got)
	}
	// The 16 timed requests, no others, went through the bindings.
	if !strings.Contains(ini.out.String(), "# stand-in: 16 postXferReq calls") {
		t.Errorf("the timed loop did not post through NIXL's bindings:\n%s", ini.out.String())
	}
	if !strings.Contains(tgt.out.String(), "# target: done after 21 notifications") {
		t.Errorf("target:\n%s", tgt.out.String())
	}
	// UCX made as nixlbench makes it, on both sides: two workers, no
	// progress threads (NIXL's Python agent alone would make one worker).
	if got := ms[0].Info["backend_param"]; got != "num_workers=2,num_threads=0" {
		t.Errorf("backend parameters %q", got)
	}
	for _, s := range []*side{tgt, ini} {
		if !strings.Contains(s.out.String(), "# stand-in: UCX created with num_threads=0,num_workers=2") {
			t.Errorf("UCX not made with nixlbench's parameters:\n%s", s.out.String())
		}
	}
}

// TestProbeAsNixlbenchKeepsGivenBackendParams: --backend-param replaces
// nixlbench's UCX parameters rather than adding to them.
func TestProbeAsNixlbenchKeepsGivenBackendParams(t *testing.T) {
	standin(t)
	tgt, ini := pair(t, time.Minute, "--as-nixlbench", "--backend-param", "num_workers=4", "--min-block", "4096", "--max-block", "4096", "--iters", "2", "--warmup", "0")
	if tgt.code != 0 || ini.code != 0 {
		t.Fatalf("exit %d/%d\n%s\n%s", tgt.code, ini.code, tgt.out.String(), ini.out.String())
	}
	ms, err := parsers.Parse(Program, strings.NewReader(ini.out.String()))
	if err != nil || len(ms) != 1 || ms[0].Info["backend_param"] != "num_workers=4" {
		t.Fatalf("%v %+v\n%s", err, ms, ini.out.String())
	}
	for _, s := range []*side{tgt, ini} {
		if !strings.Contains(s.out.String(), "# stand-in: UCX created with num_workers=4\n") {
			t.Errorf("UCX not made with the given parameters alone:\n%s", s.out.String())
		}
	}
}

// TestProbeCatchesWrongData: a transfer that says DONE but brought wrong
// bytes fails the run as a data error, not a result.
func TestProbeCatchesWrongData(t *testing.T) {
	standin(t)
	t.Setenv("NIXL_STANDIN_CORRUPT", "1")
	_, ini := pair(t, time.Minute, "--min-block", "4096", "--max-block", "4096", "--iters", "2", "--warmup", "0")
	ms, _ := parsers.Parse(Program, strings.NewReader(ini.out.String()))
	if ini.code != 1 || len(ms) != 1 || ms[0].OK || ms[0].ErrorClass != parsers.ClassDataError {
		t.Fatalf("exit %d, %+v\n%s", ini.code, ms, ini.out.String())
	}
}

// TestProbeChecksWrites: a WRITE whose bytes arrive wrong at the target
// fails the run as a data error; a clean WRITE sweep passes, its data
// checked (read back) and said so.
func TestProbeChecksWrites(t *testing.T) {
	standin(t)
	args := []string{"--op", "WRITE", "--regions", "2", "--blocks", "2", "--min-block", "4096", "--max-block", "8192", "--iters", "2", "--warmup", "0"}
	_, ini := pair(t, time.Minute, args...)
	ms, _ := parsers.Parse(Program, strings.NewReader(ini.out.String()))
	if ini.code != 0 || len(ms) != 1 || !ms[0].OK || ms[0].Info["check_consistency"] != "1" {
		t.Fatalf("clean WRITE: exit %d, %+v\n%s", ini.code, ms, ini.out.String())
	}
	t.Setenv("NIXL_STANDIN_CORRUPT_WRITE", "1")
	_, ini = pair(t, time.Minute, args...)
	ms, _ = parsers.Parse(Program, strings.NewReader(ini.out.String()))
	if ini.code != 1 || len(ms) != 1 || ms[0].OK || ms[0].ErrorClass != parsers.ClassDataError {
		t.Fatalf("corrupt WRITE: exit %d, %+v\n%s", ini.code, ms, ini.out.String())
	}
}

// TestProbeWithoutNixlSaysSo: a python3 without NIXL's package fails with
// the interpreter's path and the fix.
func TestProbeWithoutNixlSaysSo(t *testing.T) {
	standin(t)
	t.Setenv("PYTHONPATH", "")
	var out bytes.Buffer
	code := Run(context.Background(), Options{Args: []string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/x"},
		Limit: time.Minute, Stdout: &out, Stderr: &out})
	if code != 1 || !strings.Contains(out.String(), "cannot import nixl") || !strings.Contains(out.String(), "RDMABENCH_PYTHON") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

// TestProbeWatchdog: an initiator whose target never comes is ended at the
// limit with 124 and its script removed.
func TestProbeWatchdog(t *testing.T) {
	tmp := standin(t)
	var out bytes.Buffer
	code := Run(context.Background(), Options{Args: []string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/x", "--rendezvous-timeout", "600"},
		Limit: 2 * time.Second, Stdout: &out, Stderr: &out})
	if code != 124 || !strings.Contains(out.String(), "did not finish within 2s") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestProbeRendezvousTimeoutNamesEtcd: a target that cannot reach etcd
// gives up at its rendezvous timeout saying where it looked and why.
func TestProbeRendezvousTimeoutNamesEtcd(t *testing.T) {
	standin(t)
	var out bytes.Buffer
	code := Run(context.Background(), Options{Args: []string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/x", "--rendezvous-timeout", "1"},
		Limit: time.Minute, Stdout: &out, Stderr: &out})
	if code != 1 || !strings.Contains(out.String(), "waited for the target's agent metadata at /x/target: etcd at http://127.0.0.1:1") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

// TestFindReportsNixl: --find names the interpreter, NIXL and its plugins.
func TestFindReportsNixl(t *testing.T) {
	standin(t)
	var out bytes.Buffer
	Find(context.Background(), &out)
	// The stand-in package loads no libnixl.so: no C API beside it.
	for _, want := range []string{"python-found-by=PATH", "nixl-version=0.9.0+standin", "plugins=UCX", "nixl-capi=notfound"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--find lacks %q:\n%s", want, out.String())
		}
	}
	// $RDMABENCH_NIXL_CAPI, where it names a file, is what --native loads.
	lib := filepath.Join(t.TempDir(), "libnixl_capi.so")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RDMABENCH_NIXL_CAPI", lib)
	out.Reset()
	Find(context.Background(), &out)
	if !strings.Contains(out.String(), "nixl-capi="+lib+"\n") {
		t.Errorf("--find with RDMABENCH_NIXL_CAPI:\n%s", out.String())
	}
	t.Setenv(PythonEnv, "/nonexistent/python3")
	out.Reset()
	Find(context.Background(), &out)
	if !strings.Contains(out.String(), "python=/nonexistent/python3") || !strings.Contains(out.String(), "nixl-error=") {
		t.Errorf("a missing interpreter:\n%s", out.String())
	}
}

// TestStandinAgainstRealCapture: the probe over the stand-in nixl package
// prints what it prints over the real NIXL (testdata/nixl/local-probe: NIXL
// 8770b655a, UCX 1.22.0): the same banner keys, configuration keys, table
// header and sizes; only the figures and versions differ.
func TestStandinAgainstRealCapture(t *testing.T) {
	standin(t)
	real, err := os.ReadFile("../../testdata/nixl/local-probe/rdmabench/raw/probe-vllm_r0_decode-0_to_prefill-0/0-0-decode-0-initiator.out")
	if err != nil {
		t.Fatal(err)
	}
	_, ini := pair(t, time.Minute, "--min-block", "65536", "--max-block", "4194304", "--iters", "8", "--warmup", "1")
	if ini.code != 0 {
		t.Fatalf("exit %d\n%s", ini.code, ini.out.String())
	}
	shape := func(text string) (keys []string, header string, sizes []int64) {
		ms, err := parsers.Parse(Program, strings.NewReader(text))
		if err != nil || len(ms) != 1 {
			t.Fatalf("%v %+v", err, ms)
		}
		for k := range ms[0].Info {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "Block Size (B)") {
				header = strings.TrimSpace(l)
			}
		}
		for _, s := range ms[0].Samples {
			sizes = append(sizes, s.Bytes)
		}
		return keys, header, sizes
	}
	rk, rh, rs := shape(string(real))
	sk, sh, ss := shape(ini.out.String())
	rk = slices.DeleteFunc(rk, func(k string) bool { return k == "torch" || k == "torch_cuda" }) // VRAM only
	if !slices.Equal(rk, sk) || rh != sh || !slices.Equal(rs, ss) {
		t.Errorf("stand-in vs real:\nkeys %v\n     %v\nheader %q\n       %q\nsizes %v\n      %v", sk, rk, sh, rh, ss, rs)
	}
}

// TestProbeEtcdRefusesPut: an etcd (or a proxy before it) that answers
// the put with an HTTP error fails the target at once, naming etcd's URL.
func TestProbeEtcdRefusesPut(t *testing.T) {
	standin(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var out bytes.Buffer
	code := Run(context.Background(), Options{Args: []string{"--role", "target", "--etcd", srv.URL, "--key", "/x", "--rendezvous-timeout", "5"},
		Limit: time.Minute, Stdout: &out, Stderr: &out})
	if code != 1 || !strings.Contains(out.String(), "etcd at "+srv.URL+": lease grant: HTTP Error 404") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

// TestProbeBadArgumentsAreUsageErrors: a bad command line, whether
// argparse or the probe's own checks refuse it, exits 2 and parses as a
// usage error, not a tool error.
func TestProbeBadArgumentsAreUsageErrors(t *testing.T) {
	standin(t)
	for _, args := range [][]string{
		{"--op", "COPY"},
		{"--iters", "0"},
		{"--as-nixlbench", "--no-notify"},
		{"--time-limit", "inf"},
		{"--rendezvous-timeout", "0"},
	} {
		var out bytes.Buffer
		code := Run(context.Background(), Options{Args: append([]string{"--role", "initiator", "--etcd", "http://127.0.0.1:1", "--key", "/k"}, args...),
			Limit: time.Minute, Stdout: &out, Stderr: &out})
		ms, err := parsers.Parse(Program, strings.NewReader(out.String()))
		if code != 2 || err != nil || len(ms) != 1 || ms[0].OK || ms[0].ErrorClass != parsers.ClassUsageError {
			t.Errorf("%v: exit %d, %v %+v\n%s", args, code, err, ms, out.String())
		}
	}
}

// TestProbeLeavesNoKeys: both sides' keys live under etcd leases, revoked
// as each side ends (the initiator's once the target's is gone, so the
// target has read it): after a pair, nothing is left under --key for a
// later pair on the same key to mistake for a live peer.
func TestProbeLeavesNoKeys(t *testing.T) {
	standin(t)
	srv := startEtcd(t)
	key := "/rdmabench/test/leases"
	args := []string{"--min-block", "4096", "--max-block", "4096", "--iters", "2", "--warmup", "0"}
	tgt, ini := pairOn(srv.URL, key, time.Minute, args, args)
	if tgt.code != 0 || ini.code != 0 {
		t.Errorf("exit %d/%d\n%s\n%s", tgt.code, ini.code, tgt.out.String(), ini.out.String())
	}
	c, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(context.Background(), key, clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 0 {
		t.Errorf("left under %s: %v %v", key, resp, err)
	}
}

// TestProbeTargetSeesTheInitiatorFail: a binding that raises NIXL's error
// fails the initiator (a tool error naming it) and, the initiator's key
// then saying why, the target within seconds, not at its time limit.
func TestProbeTargetSeesTheInitiatorFail(t *testing.T) {
	standin(t)
	t.Setenv("NIXL_STANDIN_STATUS_ERR", "1")
	start := time.Now()
	tgt, ini := pair(t, time.Minute, "--as-nixlbench", "--min-block", "4096", "--max-block", "4096", "--iters", "4", "--warmup", "0", "--time-limit", "50")
	ms, _ := parsers.Parse(Program, strings.NewReader(ini.out.String()))
	if ini.code != 1 || len(ms) != 1 || ms[0].ErrorClass != parsers.ClassToolError || !strings.Contains(ini.out.String(), "initiator: nixlBackendError: NIXL_ERR_BACKEND") {
		t.Errorf("initiator: exit %d %+v\n%s", ini.code, ms, ini.out.String())
	}
	// Before or after the target took the initiator's metadata: it names
	// the initiator's own error, read from the initiator's key.
	if tgt.code != 1 || !strings.Contains(tgt.out.String(), "initiator: nixlBackendError: NIXL_ERR_BACKEND") {
		t.Errorf("target: exit %d\n%s", tgt.code, tgt.out.String())
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v: the target waited for its time limit", took)
	}
}

// TestProbeFailsBeforePublishing: an initiator that fails before it has
// published (here: the stand-in's plugin list lacks the backend) still
// tells the target, which stops at once naming the initiator's error,
// not at its rendezvous timeout.
func TestProbeFailsBeforePublishing(t *testing.T) {
	standin(t)
	srv := startEtcd(t)
	start := time.Now()
	tgt, ini := pairOn(srv.URL, "/rdmabench/test/early", 2*time.Minute, []string{"--rendezvous-timeout", "60"},
		[]string{"--rendezvous-timeout", "60", "--backend", "NOSUCH"})
	if ini.code != 1 || tgt.code != 1 || !strings.Contains(tgt.out.String(), "the initiator failed: ") {
		t.Errorf("exit %d/%d\ntarget:\n%s\ninitiator:\n%s", tgt.code, ini.code, tgt.out.String(), ini.out.String())
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v: the target waited out its rendezvous", took)
	}
}
