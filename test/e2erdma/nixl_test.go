package e2erdma

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// The real nixlbench between the VMs (`make e2e-nixl NIXL_PREFIX=…`):
// RDMABENCH_NIXL_PREFIX names a NIXL + nixlbench build (ETCD runtime, UCX
// and LIBFABRIC plugins; built outside the repository, relocatable: RPATH
// $ORIGIN) which the lane copies into both VMs. Without it these tests skip.

// nixlDir is where the prefix lands in the VMs.
const nixlDir = "/opt/nixl"

var (
	nixlOnce sync.Once
	nixlErr  error
)

func needNixl(t *testing.T) string {
	t.Helper()
	needVMs(t)
	if rt := os.Getenv("RDMABENCH_NIXL_RUNTIME"); rt != "" && rt != "ETCD" {
		// These tests measure nixlbench's ETCD runtime through rdmabench's
		// etcd; a build without etcd-cpp-apiv3 has only ASIO (the probe
		// lane, TestNixlProbeOnVMs, runs nixlbench with it).
		t.Skipf("RDMABENCH_NIXL_RUNTIME=%s: the nixlbench at RDMABENCH_NIXL_PREFIX has no ETCD runtime, which this test measures", rt)
	}
	return needNixlPrefix(t)
}

// needNixlPrefix installs RDMABENCH_NIXL_PREFIX into both VMs, once,
// whatever nixlbench's runtime (the probe lane runs nixlbench with ASIO
// where the build has no ETCD runtime).
func needNixlPrefix(t *testing.T) string {
	t.Helper()
	needVMs(t)
	prefix := os.Getenv("RDMABENCH_NIXL_PREFIX")
	if prefix == "" {
		t.Skip("RDMABENCH_NIXL_PREFIX is not set: the real-nixlbench lane runs with `make e2e-nixl NIXL_PREFIX=…`")
	}
	nixlOnce.Do(func() { nixlErr = installNixl(t, prefix) })
	if nixlErr != nil {
		t.Fatalf("install %s into the VMs: %v", prefix, nixlErr)
	}
	return prefix
}

// installNixl copies the prefix's runtime (bin, lib without static
// libraries and build files) into both VMs through ssh (tar on stdin).
func installNixl(t *testing.T, prefix string) error {
	archive, err := runtimeTar(prefix)
	if err != nil {
		return err
	}
	b, eps := newBackend(t)
	for _, ep := range eps {
		start := time.Now()
		out, err := b.ExecStdin(timeout(t, 5*time.Minute), ep, []string{"sh", "-c", "mkdir -p " + nixlDir + " && tar -xzf - -C " + nixlDir}, archive)
		if err != nil {
			return fmt.Errorf("%s: %v (%s)", ep.Host, err, out)
		}
		t.Logf("nixl runtime (%.1f MB gzip) into %s in %.1fs", float64(len(archive))/1e6, ep.Host, time.Since(start).Seconds())
	}
	return nil
}

// runtimeTar is prefix/bin and prefix/lib as a gzip tar, leaving out what
// only a build needs.
func runtimeTar(prefix string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, top := range []string{"bin", "lib"} {
		err := filepath.WalkDir(filepath.Join(prefix, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(prefix, path)
			if d.IsDir() && (strings.HasPrefix(rel, "lib/cmake") || strings.HasPrefix(rel, "lib/pkgconfig") || strings.HasPrefix(rel, "lib/python")) {
				return filepath.SkipDir
			}
			if strings.HasSuffix(rel, ".a") || strings.HasSuffix(rel, ".la") {
				return nil
			}
			info, err := os.Lstat(path)
			if err != nil {
				return err
			}
			link := ""
			if info.Mode()&os.ModeSymlink != 0 {
				if link, err = os.Readlink(path); err != nil {
					return err
				}
			}
			hdr, err := tar.FileInfoHeader(info, link)
			if err != nil {
				return err
			}
			hdr.Name = rel
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if info.Mode().IsRegular() {
				f, err := os.Open(path)
				if err != nil {
					return err
				}
				_, err = io.Copy(tw, f)
				f.Close()
				return err
			}
			return nil
		})
		if err != nil {
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

// dataIface is the VM's interface holding its 10.9.0.x address (the NIC
// rxe0 sits on).
func dataIface(t *testing.T, i int) string {
	b, eps := newBackend(t)
	out, err := b.Exec(timeout(t, time.Minute), eps[i], []string{"sh", "-c", "/sbin/ip -o -4 addr show | grep ' 10.9.0.' | cut -d' ' -f2"})
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("data interface of %s: %v (%q)", eps[i].Host, err, out)
	}
	return strings.TrimSpace(string(out))
}

// nixlSSHScenario is prefill on vm1, decode on vm2 (the ssh backend), the
// prefix on PATH, and the given tests.
func nixlSSHScenario(t *testing.T, tests string) string {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: nixl-softroce
  description: "real nixlbench between the soft-RoCE VMs, ETCD runtime through rdmabench's etcd on vm1"
backend: ssh
hosts:
` + hostsYAML() + `lineRate: auto
defaults:
  device: rxe0
  gidIndex: 1
  timeout: 15m
  env:
    PATH: ` + nixlDir + `/bin:/usr/sbin:/usr/bin:/sbin:/bin
    LD_LIBRARY_PATH: ` + nixlDir + `/lib
pools:
  - {name: prefill, hosts: [vm1]}
  - {name: decode, hosts: [vm2]}
tests:
` + tests
	path := filepath.Join(t.TempDir(), "nixl-softroce.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func hostsYAML() string {
	var b strings.Builder
	for _, h := range pair.Hosts() {
		fmt.Fprintf(&b, "  - {name: %s, address: %s, port: %d, user: root, keyFile: %s, knownHostsFile: %s, dataAddress: %s}\n",
			h.Name, h.Address, h.Port, h.KeyFile, h.KnownHostsFile, h.DataAddress)
	}
	return b.String()
}

// TestNixlOnVMs: prefill on vm1, decode on vm2, the real nixlbench through
// `rdmabench run` over the ssh backend, its ETCD runtime rendezvousing
// through the etcd rdmabench starts on vm1: UCX with its own choice of
// transports, which must be rc_verbs on rxe0 (read from UCX's own protocol
// tables, the path proved on rxe0's counters; UCX_TLS=rc_verbs,tcp fails
// NIXL's intra-agent set-up: no transport reaches the agent itself), and
// LIBFABRIC over the tcp provider on the data NIC (said so).
func TestNixlOnVMs(t *testing.T) {
	needNixl(t)
	iface := dataIface(t, 0)
	if other := dataIface(t, 1); other != iface {
		t.Fatalf("data interfaces differ (%s, %s): FI_TCP_IFACE is per scenario here", iface, other)
	}
	common := `      minSize: 64KiB
      maxSize: 256KiB
      iterations: 32
      extra: ["--total_buffer_size=67108864", "--warmup_iter=4"]
`
	scenario := nixlSSHScenario(t, `  - name: kv-ucx
    tool: nixlbench
    from: decode
    to: prefill
    requires: rdma
    expect: {transport: rdma}
    args:
      backend: UCX
      op: READ
`+common+`  - name: kv-libfabric
    tool: nixlbench
    from: decode
    to: prefill
    requires: tcp
    env: {FI_TCP_IFACE: `+iface+`}
    args:
      backend: LIBFABRIC
      op: READ
`+common)
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
	checkNixlResults(t, rep, 2)
	assertNoNixlLeft(t)
	if *record {
		recordNixl(t, out, "softroce-vms-ssh", scenario, fmt.Sprintf("rdmabench run: %.0f s wall, exit %d", wall.Seconds(), code))
	}
}

// TestNixlKubeOnVMs: the same transfers with the VMs as nodes of the real
// control plane: `rdmabench run` on the kube backend places prefill and
// decode on different VMs (host network: rxe0 is the VM's), runs the run's
// etcd in a pod (on the host network with them, port 12379), reaches it
// through the API's port-forward, and the real nixlbench in both pods
// rendezvouses through it: UCX over rc_verbs with the path proved on the
// counters read in the pods, LIBFABRIC over tcp. Then no pod is left in
// the API and no process in the VMs.
func TestNixlKubeOnVMs(t *testing.T) {
	needNixl(t)
	iface := dataIface(t, 0)
	c, log := startVMCluster(t)
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: nixl-kube-softroce
  description: "real nixlbench pod to pod on the soft-RoCE VMs as kube nodes, ETCD runtime through the run's etcd pod"
backend: kube
cluster:
  namespace: nixl
  image: host/rdmabench:test
  hostNetwork: true
  nodeSelector:
    rdmabench.io/soft-roce: "true"
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 90s
lineRate: auto
defaults:
  device: rxe0
  gidIndex: 1
  timeout: 15m
  env:
    PATH: ` + nixlDir + `/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    LD_LIBRARY_PATH: ` + nixlDir + `/lib
pools:
  - name: prefill
  - name: decode
    avoidPools: [prefill]
tests:
  - name: kv-ucx
    tool: nixlbench
    from: decode
    to: prefill
    requires: rdma
    expect: {transport: rdma}
    args: {backend: UCX, op: READ, minSize: 64KiB, maxSize: 256KiB, iterations: 32, extra: ["--total_buffer_size=67108864", "--warmup_iter=4"]}
  - name: kv-libfabric
    tool: nixlbench
    from: decode
    to: prefill
    requires: tcp
    env: {FI_TCP_IFACE: ` + iface + `}
    args: {backend: LIBFABRIC, op: READ, minSize: 64KiB, maxSize: 256KiB, iterations: 32, extra: ["--total_buffer_size=67108864", "--warmup_iter=4"]}
`
	scenario := filepath.Join(t.TempDir(), "nixl-kube-softroce.yaml")
	if err := os.WriteFile(scenario, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, stdout, stderr := rdmabench(t, "run", scenario, "--kubeconfig", c.Kubeconfig, "--out", out, "--html", "none")
	wall := time.Since(start)
	t.Logf("rdmabench run (exit %d, %.0fs):\n%s%s", code, wall.Seconds(), stderr, stdout)
	if !strings.Contains(stderr, "etcd for nixlbench: pod ") {
		t.Errorf("no etcd pod announced")
	}
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	nodes := map[string]string{}
	for _, ep := range rep.Endpoints {
		nodes[ep.Name] = ep.Node
	}
	if nodes["prefill-0"] == "" || nodes["prefill-0"] == nodes["decode-0"] {
		t.Errorf("pods on nodes %v; want prefill and decode on different VMs", nodes)
	}
	checkNixlResults(t, rep, 2)
	assertNothingLeftOnVMs(t, c, log)
	assertNoNixlLeft(t)
	if *record {
		recordNixl(t, out, "softroce-vms-kube", scenario, fmt.Sprintf("rdmabench run on kube (VMs as nodes): %.0f s wall, exit %d", wall.Seconds(), code))
	}
}

// checkNixlResults: both backends passed, UCX over rc_verbs with its path
// proved on rxe0's counters, LIBFABRIC over tcp said so.
func checkNixlResults(t *testing.T, rep *schema.Report, want int) {
	t.Helper()
	for _, r := range rep.Results {
		if r.Verdict != schema.VerdictPass || r.Family != "nixlbench" || r.BestBps <= 0 {
			t.Errorf("%s: %s (%s) best %.0f", r.Test, r.Verdict, r.Reason, r.BestBps)
			continue
		}
		switch r.Backend {
		case "UCX":
			if r.Transport == nil || r.Transport.Kind != "rdma" || !strings.Contains(r.Transport.Detail, "rc_verbs") {
				t.Errorf("UCX transport %+v; want rc_verbs named by UCX's protocol tables", r.Transport)
			}
			if r.Path == nil || !r.Path.Verified {
				t.Errorf("UCX path %+v; want rxe0's counters to account for the traffic", r.Path)
			}
		case "LIBFABRIC":
			if r.Transport == nil || r.Transport.Kind != "tcp" || r.Transport.Source != "libfabric" {
				t.Errorf("LIBFABRIC transport %+v; want tcp, from NIXL's provider line", r.Transport)
			}
		}
		t.Logf("%s %s: best %.1f Mb/s @%d; transport %+v; path %s", r.Test, r.Backend, r.BestBps/1e6, r.BestBytes, r.Transport, pathDetail(r.Path))
	}
	if len(rep.Results) != want {
		t.Errorf("%d results; want %d", len(rep.Results), want)
	}
}

// assertNoNixlLeft: no nixlbench and no rdmabench etcd runs in either VM.
func assertNoNixlLeft(t *testing.T) {
	b, eps := newBackend(t)
	for _, ep := range eps {
		out, _ := b.Exec(timeout(t, time.Minute), ep, []string{"sh", "-c", "ps -o pid,args 2>/dev/null | grep -e nixlbench -e 'rdmabench etcd' | grep -v grep || true"})
		if s := strings.TrimSpace(string(out)); s != "" {
			t.Errorf("left running on %s:\n%s", ep.Host, s)
		}
	}
}

// recordNixl copies a run's folder (report.json, results.jsonl, plan,
// scenario, raw outputs) into testdata/nixl/<name>/ with a note.
func recordNixl(t *testing.T, run, name, scenario, note string) {
	dst := filepath.Join(repoRoot, "testdata", "nixl", name)
	_ = os.RemoveAll(dst)
	err := filepath.WalkDir(run, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(run, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, "rdmabench", rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.MarshalIndent(map[string]string{"note": note, "recorded": time.Now().UTC().Format(time.RFC3339)}, "", "  ")
	_ = os.WriteFile(filepath.Join(dst, "recorded.json"), meta, 0o644)
	t.Logf("recorded into %s", dst)
}
