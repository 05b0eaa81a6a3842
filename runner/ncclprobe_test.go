package runner

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// ncclProbeStandins builds rdmabench-nccl and the stand-in libcuda.so.1 and
// libnccl.so.2 (probe/nccl/testdata/standin) into one folder on PATH and
// LD_LIBRARY_PATH, as the tools bundle and the serving image would be.
func ncclProbeStandins(t *testing.T) {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc: the stand-in libraries cannot be built")
	}
	dir := t.TempDir()
	src := filepath.Join("..", "probe", "nccl", "testdata", "standin")
	for lib, c := range map[string]string{"libcuda.so.1": "cuda.c", "libnccl.so.2": "nccl.c"} {
		if out, err := exec.Command(cc, "-O2", "-shared", "-fPIC", "-o", filepath.Join(dir, lib), filepath.Join(src, c)).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", lib, err, out)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "rdmabench-nccl"), "../cmd/rdmabench-nccl")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	if err := writeNvidiaSmi(dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("LD_LIBRARY_PATH", dir)
	t.Setenv("TMPDIR", dir)
}

// TestNCCLProbeThroughTheRunner: a nccl_probe test as the planner plans it
// (one process per GPU: two on pool a's endpoint, one on b's, rank 0 first,
// ready when its id is in the run's etcd) runs on the local backend without
// MPI, and its report says which program measured and how many ranks.
func TestNCCLProbeThroughTheRunner(t *testing.T) {
	ncclProbeStandins(t)
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: nccl-probe-local}
backend: local
pools:
  - {name: a, gpus: 2}
  - {name: b, gpus: 1}
tests:
  - name: ar
    tool: nccl_probe
    from: a
    to: b
    requires: tcp
    args: {collective: all_reduce, minSize: 64KiB, maxSize: 1MiB, stepFactor: 4, iterations: 3}
    expect: {minBusBW: 1KB/s}
`
	rep, out := runLocalScenario(t, "nccl-probe.yaml", text, 410)
	r := rep.Results[0]
	raw, _ := os.ReadFile(filepath.Join(out, r.RawOutputs[0]))
	if r.Verdict != schema.VerdictPass || len(r.Samples) != 3 || r.NRanks != 3 || r.BestBps <= 0 {
		t.Fatalf("%s %q, %d samples, %d ranks\n%s\n%s", r.Verdict, r.Reason, len(r.Samples), r.NRanks, strings.Join(r.Commands, "\n"), raw)
	}
	if r.Program != "rdmabench-nccl" || r.Libraries["nccl"] != "2.28.9" || r.Libraries["nccl-found-by"] != "loader" {
		t.Errorf("program %q, libraries %v: want the probe and the NCCL it loaded", r.Program, r.Libraries)
	}
	found := 0
	for _, ep := range rep.Preflight {
		for _, c := range ep.Checks {
			if c.ID == "nccl-probe-finds-nccl" && c.Status == "pass" && strings.Contains(c.Evidence, "NCCL 2.28.9 at libnccl.so.2 (found by loader)") {
				found++
			}
		}
	}
	if found != 2 {
		t.Errorf("preflight found the stand-in NCCL on %d of 2 endpoints: %+v", found, rep.Preflight)
	}
	// Each rank its own raw output, two of them on endpoint a-0 (one
	// file for both interleaved their lines on 4×H100).
	seen := map[string]bool{}
	for _, o := range r.RawOutputs {
		seen[filepath.Base(o)] = true
	}
	for _, want := range []string{"0-0-a-0-rank.out", "0-0-a-0-rank-1.out", "0-0-b-0-rank.out"} {
		if !seen[want] {
			t.Errorf("raw outputs %v: no %s", r.RawOutputs, want)
		}
	}
	if !strings.Contains(string(raw), "# rdmabench-nccl version") || !strings.Contains(r.Commands[0], "--key xferbench/rdmabench-") {
		t.Errorf("raw output or command:\n%s\n%s", r.Commands[0], raw)
	}
}

// runLocalScenario loads a scenario's text, compiles it for this host (no
// RDMA device) and runs it on the local backend, bounded: the report and
// the results folder.
func runLocalScenario(t *testing.T, name, text string, portOffset int) (*schema.Report, string) {
	t.Helper()
	sc, err := scenarios.LoadBytes(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }, PortOffset: portOffset})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	rep, err := Run(ctx, Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: out, Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep, out
}

// TestSingleHostCollectiveIsHeldToNVLink: a collective whose ranks all run
// on one endpoint is held to its GPUs' NVLink (links × per-link rate per
// direction, read with nvidia-smi nvlink --status where it runs: here the
// real status of a 2×H200 host, printed by a stand-in nvidia-smi), so its
// result has a % of line rate and says where the rate came from.
func TestSingleHostCollectiveIsHeldToNVLink(t *testing.T) {
	ncclProbeStandins(t)
	raw, err := os.ReadFile("../testdata/gpu/h200-2gpu/machine.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, status, _ := strings.Cut(string(raw), "+ nvidia-smi nvlink -s\n")
	status, _, _ = strings.Cut(status, "+ nvcc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "status.txt"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	smi := "#!/bin/sh\n[ \"$1 $2\" = \"nvlink --status\" ] && exec cat " + filepath.Join(dir, "status.txt") +
		"\n[ \"$1\" = -L ] && { echo 'GPU 0: NVIDIA H200 (UUID: GPU-a)'; echo 'GPU 1: NVIDIA H200 (UUID: GPU-b)'; exit 0; }\nexit 9\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: nccl-nvlink}
backend: local
pools:
  - {name: gpu, gpus: 2}
tests:
  - name: ar
    tool: nccl_probe
    from: gpu
    requires: tcp
    args: {collective: all_reduce, minSize: 64KiB, maxSize: 256KiB, iterations: 3}
`
	rep, _ := runLocalScenario(t, "nccl-nvlink.yaml", text, 430)
	r := rep.Results[0]
	if r.LineRate == nil || r.LineRate.Source != schema.LineRateNVLink || math.Abs(r.LineRate.Bps-478.116*8e9) > 1e3 || r.Efficiency == nil ||
		!strings.Contains(r.LineRate.Detail, "NVLink: 18 links × 26.562 GB/s per direction") {
		t.Fatalf("line rate %+v, efficiency %v (%s %q)", r.LineRate, r.Efficiency, r.Verdict, r.Reason)
	}
}
