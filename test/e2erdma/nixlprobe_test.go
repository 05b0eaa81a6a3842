package e2erdma

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// pyDir is where the host's Python (Debian's python3 with its numpy: what a
// serving image's python3 is to NIXL's package) lands in the VMs, which
// have none of their own.
const pyDir = "/opt/py"

var (
	probeOnce sync.Once
	probeErr  error
)

// needProbeRuntime installs, once, what the NIXL probe needs in the VMs
// beside the NIXL prefix: the prefix's Python package, the host's python3
// with numpy (and the libraries they load that the VMs lack), and
// rdmabench-nixl (static) and rdmabench-nccl (--native's sides).
func needProbeRuntime(t *testing.T) {
	t.Helper()
	prefix := needNixlPrefix(t)
	if _, err := os.Stat(filepath.Join(prefix, "lib", "python", "site-packages", "nixl")); err != nil {
		t.Skip("the NIXL build has no Python package (lib/python/site-packages/nixl): the probe needs it")
	}
	probeOnce.Do(func() { probeErr = installProbeRuntime(t, prefix) })
	if probeErr != nil {
		t.Fatalf("install the probe's runtime into the VMs: %v", probeErr)
	}
}

func installProbeRuntime(t *testing.T, prefix string) error {
	files := map[string]string{ // VM path → host path
		pyDir + "/bin/python3": "/usr/bin/python3.11",
	}
	// rdmabench-nccl beside rdmabench-nixl: --native's sides run in it.
	for _, p := range []string{"rdmabench-nixl", "rdmabench-nccl"} {
		bin := filepath.Join(t.TempDir(), p)
		build := exec.Command("go", "build", "-o", bin, "../../cmd/"+p)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", p, err, out)
		}
		files[nixlDir+"/bin/"+p] = bin
	}
	// rdmabench-nccl (purego, CGO_ENABLED=0) needs libdl.so.2 and
	// libpthread.so.0, which every glibc image has but the VMs' trimmed
	// root file system lacks: the host's, from the same glibc packages.
	for _, lib := range []string{"libdl.so.2", "libpthread.so.0"} {
		files[pyDir+"/lib/"+lib] = "/lib/x86_64-linux-gnu/" + lib
	}
	site := filepath.Join(prefix, "lib", "python", "site-packages")
	for _, tree := range [][2]string{{site, nixlDir + "/lib/python/site-packages"}, {"/usr/lib/python3.11", pyDir + "/lib/python3.11"},
		{"/usr/lib/python3/dist-packages/numpy", pyDir + "/lib/python3/dist-packages/numpy"}} {
		if err := addTree(files, tree[0], tree[1]); err != nil {
			return err
		}
	}
	if err := addLibraries(files); err != nil {
		return err
	}
	archive, err := tarOf(files)
	if err != nil {
		return err
	}
	b, eps := newBackend(t)
	for _, ep := range eps {
		start := time.Now()
		out, err := b.ExecStdin(timeout(t, 5*time.Minute), ep, []string{"sh", "-c", "tar -xzf - -C /"}, archive)
		if err != nil {
			return fmt.Errorf("%s: %v (%s)", ep.Host, err, out)
		}
		t.Logf("python3 + numpy + NIXL's package (%.1f MB gzip) into %s in %.1fs", float64(len(archive))/1e6, ep.Host, time.Since(start).Seconds())
	}
	return nil
}

// addTree adds the regular files under from, leaving out what the probe
// never imports (tests, tkinter, idle, caches).
func addTree(files map[string]string, from, to string) error {
	skip := regexp.MustCompile(`(^|/)(test|tests|idlelib|tkinter|turtledemo|ensurepip|lib2to3|__pycache__)(/|$)`)
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if skip.MatchString(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
				files[to+"/"+rel] = path
			}
		}
		return nil
	})
}

// addLibraries adds the shared libraries python3 and the extension modules
// load (ldd here) into pyDir/lib, but not the C library itself: the VMs
// run the same Debian release's.
func addLibraries(files map[string]string) error {
	var objs []string
	for vm, host := range files {
		if strings.HasSuffix(vm, ".so") || strings.Contains(vm, ".so.") || strings.HasSuffix(vm, "/bin/python3") {
			objs = append(objs, host)
		}
	}
	own := regexp.MustCompile(`^(libc|libm|libpthread|libdl|librt|ld-linux-x86-64)\.so`)
	line := regexp.MustCompile(`=> (/\S+) \(`)
	for _, o := range objs {
		out, err := exec.Command("ldd", o).Output()
		if err != nil {
			continue // not a dynamic object
		}
		for _, m := range line.FindAllStringSubmatch(string(out), -1) {
			if base := filepath.Base(m[1]); !own.MatchString(base) && !strings.HasPrefix(m[1], "/tmp/") {
				files[pyDir+"/lib/"+base] = m[1]
			}
		}
	}
	return nil
}

func tarOf(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for vm, host := range files {
		data, err := os.ReadFile(host)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(vm, "/"), Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := io.Copy(tw, bytes.NewReader(data)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TestNixlProbeOnVMs: the NIXL probe as vLLM drives NIXL, decode on vm2
// READing prefill's DRAM on vm1 through `rdmabench run` (ssh backend), over
// real soft-RoCE: UCX must choose rc_verbs (UCX's own protocol tables) and
// rxe0's counters must account for the traffic (the path proof); nixlbench
// from the same build beside it. Its runtime is $RDMABENCH_NIXL_RUNTIME
// (ETCD by default; ASIO for a build without etcd-cpp-apiv3).
func TestNixlProbeOnVMs(t *testing.T) {
	needProbeRuntime(t)
	runtime := os.Getenv("RDMABENCH_NIXL_RUNTIME")
	if runtime == "" {
		runtime = "ETCD"
	}
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: nixl-probe-softroce
  description: "the NIXL probe (vLLM's way and --native) and nixlbench between the soft-RoCE VMs"
backend: ssh
hosts:
` + hostsYAML() + `lineRate: auto
defaults:
  device: rxe0
  gidIndex: 1
  timeout: 15m
  env:
    PATH: ` + nixlDir + `/bin:/usr/sbin:/usr/bin:/sbin:/bin
    PYTHONHOME: ` + pyDir + `
    PYTHONPATH: ` + pyDir + `/lib/python3/dist-packages:` + nixlDir + `/lib/python/site-packages
    LD_LIBRARY_PATH: ` + pyDir + `/lib:` + nixlDir + `/lib
    RDMABENCH_PYTHON: ` + pyDir + `/bin/python3
    NIXL_PLUGIN_DIR: ` + nixlDir + `/lib/plugins
pools:
  - {name: prefill, hosts: [vm1]}
  - {name: decode, hosts: [vm2]}
tests:
  - name: kv-probe
    tool: nixl_probe
    from: decode
    to: prefill
    requires: rdma
    expect: {transport: rdma}
    args: {backend: UCX, op: READ, minSize: 64KiB, maxSize: 256KiB, iterations: 32}
  - name: kv-native
    tool: nixl_probe
    from: decode
    to: prefill
    requires: rdma
    expect: {transport: rdma}
    args: {backend: UCX, op: READ, minSize: 64KiB, maxSize: 256KiB, iterations: 32, extra: ["--native"]}
  - name: kv-nixlbench
    tool: nixlbench
    from: decode
    to: prefill
    requires: rdma
    expect: {transport: rdma}
    args: {backend: UCX, op: READ, runtime: ` + runtime + `, minSize: 64KiB, maxSize: 256KiB, iterations: 32, extra: ["--warmup_iter=4"]}
`
	scenario := filepath.Join(t.TempDir(), "nixl-probe-softroce.yaml")
	if err := os.WriteFile(scenario, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, stdout, stderr := rdmabench(t, "run", scenario, "--out", out, "--html", "none")
	wall := time.Since(start)
	t.Logf("rdmabench run (exit %d, %.0fs):\n%s%s", code, wall.Seconds(), stderr, stdout)
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	checkNixlResults(t, rep, 3)
	for _, r := range rep.Results {
		if r.Tool == "nixl_probe" && (r.Program != "rdmabench-nixl" || r.Libraries["ucx"] == "") {
			t.Errorf("probe result: program %q libraries %v", r.Program, r.Libraries)
		}
	}
	assertNoNixlLeft(t)
	if *record {
		recordNixl(t, out, "softroce-vms-probe", scenario, fmt.Sprintf("rdmabench run: %.0f s wall, exit %d; nixlbench runtime %s", wall.Seconds(), code, runtime))
	}
}
