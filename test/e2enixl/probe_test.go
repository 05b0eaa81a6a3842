package e2enixl

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// probeScenario: the NIXL probe as vLLM drives NIXL (a transfer made per
// request, a notification each), the probe as nixlbench drives it (one
// prepared transfer posted again, no notification), and nixlbench itself,
// from the same NIXL build, two local processes over UCX, READ, DRAM.
const probeScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: nixl-probe-local
  description: "the NIXL probe beside nixlbench, the same NIXL build, two local processes over UCX"
backend: local
pools:
  - {name: prefill}
  - {name: decode}
tests:
  - name: probe-vllm
    tool: nixl_probe
    from: decode
    to: prefill
    requires: tcp
    args: {backend: UCX, op: READ, minSize: 64KiB, maxSize: 4MiB, iterations: 512}
  - name: probe-reuse
    tool: nixl_probe
    from: decode
    to: prefill
    requires: tcp
    args: {backend: UCX, op: READ, minSize: 64KiB, maxSize: 4MiB, iterations: 512, extra: ["--reuse-xfer", "--no-notify"]}
  - name: probe-native
    tool: nixl_probe
    from: decode
    to: prefill
    requires: tcp
    args: {backend: UCX, op: READ, minSize: 64KiB, maxSize: 4MiB, iterations: 512, extra: ["--native"]}
  - name: nixlbench
    tool: nixlbench
    from: decode
    to: prefill
    requires: tcp
    args: {backend: UCX, op: READ, runtime: RUNTIME, minSize: 64KiB, maxSize: 4MiB, iterations: 512, extra: ["--total_buffer_size=67108864", "--warmup_iter=16"]}
`

// TestProbeBesideNixlbench: `rdmabench run` of the NIXL probe (the
// build's Python package, with $RDMABENCH_NIXL_PYTHON or python3) and of
// nixlbench from the same build: every test passes, the probe's data is
// checked, its results name the program and the NIXL and UCX it loaded,
// and the bandwidths sit side by side per size. nixlbench's runtime is
// $RDMABENCH_NIXL_RUNTIME (ETCD by default; ASIO for a build without
// etcd-cpp-apiv3).
func TestProbeBesideNixlbench(t *testing.T) {
	needNixl(t)
	site := filepath.Join(prefix, "lib", "python", "site-packages")
	if _, err := os.Stat(filepath.Join(site, "nixl")); err != nil {
		t.Skipf("the build has no Python package at %s: the probe needs NIXL's Python bindings", site)
	}
	python := os.Getenv("RDMABENCH_NIXL_PYTHON")
	if python == "" {
		python = "python3"
	}
	runtime := os.Getenv("RDMABENCH_NIXL_RUNTIME")
	if runtime == "" {
		runtime = "ETCD"
	}
	dir := t.TempDir()
	// rdmabench-nccl hosts --native's sides (NIXL's C API through purego).
	for _, p := range []string{"rdmabench-nixl", "rdmabench-nccl"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, p), "../../cmd/"+p)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", p, err, out)
		}
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	t.Setenv("PYTHONPATH", site)
	t.Setenv("RDMABENCH_PYTHON", python)
	t.Setenv("LD_LIBRARY_PATH", filepath.Join(prefix, "lib"))
	t.Setenv("NIXL_PLUGIN_DIR", filepath.Join(prefix, "lib", "plugins"))
	scen := filepath.Join(dir, "nixl-probe-local.yaml")
	if err := os.WriteFile(scen, []byte(strings.Replace(probeScenario, "RUNTIME", runtime, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	start := time.Now()
	code, log := rdmabench(t, "run", scen, "--out", out, "--html", "none")
	wall := time.Since(start)
	t.Logf("rdmabench run (exit %d, %.0fs):\n%s", code, wall.Seconds(), log)
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	byTest := map[string]*schema.Result{}
	for i := range rep.Results {
		r := &rep.Results[i]
		byTest[r.Test] = r
		if r.Verdict != schema.VerdictPass || len(r.Samples) != 7 {
			t.Errorf("%s: %s (%s), %d sizes", r.Test, r.Verdict, r.Reason, len(r.Samples))
		}
	}
	for _, name := range []string{"probe-vllm", "probe-reuse"} {
		r := byTest[name]
		if r == nil || r.Program != "rdmabench-nixl" || r.Libraries["ucx"] == "" || r.Libraries["python"] == "" {
			t.Errorf("%s: want the probe, with the UCX and python it loaded: %+v", name, r)
		}
	}
	// --native: both sides in Go through the build's libnixl_capi.so, found
	// beside the libnixl.so its Python package maps.
	if r := byTest["probe-native"]; r == nil || r.Program != "rdmabench-nixl" || r.Libraries["ucx"] == "" {
		t.Errorf("probe-native: want the probe, with the UCX it loaded: %+v", r)
	}
	table := probeTable(byTest)
	t.Logf("side by side:\n%s", table)
	if *record {
		recordCapture(t, "local-probe", out, nil, nil, nil, table,
			fmt.Sprintf("rdmabench run: %.0f s wall, exit %d; nixlbench runtime %s; python %s", wall.Seconds(), code, runtime, python))
	}
}

// probeTable is GB/s per block size: nixlbench, the probe posting one
// prepared transfer again (nixlbench's way), the probe as vLLM (a transfer
// made per request, with a notification), and the ratio of the first
// probe to nixlbench.
func probeTable(by map[string]*schema.Result) string {
	bw := func(name string) map[int64]float64 {
		m := map[int64]float64{}
		if r := by[name]; r != nil {
			for _, s := range r.Samples {
				if s.BWAvgBps != nil {
					m[s.Bytes] = *s.BWAvgBps / 8e9
				}
			}
		}
		return m
	}
	nb, reuse, vllm, native := bw("nixlbench"), bw("probe-reuse"), bw("probe-vllm"), bw("probe-native")
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %12s %14s %14s %8s %14s\n", "block", "nixlbench", "probe (reuse)", "probe (vLLM)", "ratio", "probe (native)")
	if r := by["nixlbench"]; r != nil {
		for _, s := range r.Samples {
			ratio := 0.0
			if nb[s.Bytes] > 0 {
				ratio = reuse[s.Bytes] / nb[s.Bytes]
			}
			fmt.Fprintf(&b, "%-8s %7.2f GB/s %9.2f GB/s %9.2f GB/s %8.2f %9.2f GB/s\n", schema.FormatSizeShort(s.Bytes), nb[s.Bytes], reuse[s.Bytes], vllm[s.Bytes], ratio, native[s.Bytes])
		}
	}
	return b.String()
}
