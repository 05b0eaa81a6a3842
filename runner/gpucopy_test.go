package runner

import (
	"context"
	"math"
	"os"
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

// nvlinkStandin puts first on PATH an nvidia-smi that prints the real
// NVLink status of a 2×H200 host and lists its two GPUs.
func nvlinkStandin(t *testing.T) {
	t.Helper()
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
}

// TestGPUCopyIsTheWaterfallsBottom: on one host of two GPUs, prefill on
// GPU 0 and decode on GPU 1 (each its own first in CUDA_VISIBLE_DEVICES),
// a gpu_copy test (decode READs prefill) and a NCCL probe sendrecv over
// the stand-ins: the copy runs once, on decode, with --peer-device 1 and
// no NCCL; it is a pair result held to NVLink; and the pair's waterfall
// is GPU copy then nccl sendrecv, each layer the value its test measured.
// (The sendrecv stays under 1 MiB: the stand-in NCCL's star over TCP
// stalls when two ranks send MiB messages at once.)
func TestGPUCopyIsTheWaterfallsBottom(t *testing.T) {
	ncclProbeStandins(t)
	nvlinkStandin(t)
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: gpu-copy-local}
backend: local
pools:
  - {name: prefill, gpus: 1}
  - {name: decode, gpus: 1}
tests:
  - name: gpu-copy
    tool: gpu_copy
    from: decode
    to: prefill
    args: {minSize: 1MiB, maxSize: 4MiB, stepFactor: 2, iterations: 3}
  - name: nccl-sendrecv
    tool: nccl_probe
    from: decode
    to: prefill
    requires: tcp
    args: {collective: sendrecv, minSize: 64KiB, maxSize: 256KiB, stepFactor: 2, iterations: 3}
`
	sc, err := scenarios.LoadBytes("gpu-copy.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }, PortOffset: 450,
		HostGPUs: func() (int, string) { return 2, "nvidia-smi -L" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: t.TempDir(), Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	byTest := map[string]schema.Result{}
	for _, r := range rep.Results {
		byTest[r.Test] = r
	}
	cp, sr := byTest["gpu-copy"], byTest["nccl-sendrecv"]
	if cp.Verdict != schema.VerdictPass || cp.From != "decode-0" || cp.To != "prefill-0" || len(cp.Samples) != 3 || cp.BestBps <= 0 || len(cp.Commands) != 1 {
		t.Fatalf("gpu copy: %s %q from %q to %q, %d samples, best %v\n%s", cp.Verdict, cp.Reason, cp.From, cp.To, len(cp.Samples), cp.BestBps, strings.Join(cp.Commands, "\n"))
	}
	if c := cp.Commands[0]; !strings.HasPrefix(c, "decode-0$ ") || !strings.Contains(c, "CUDA_VISIBLE_DEVICES=1,0") ||
		!strings.Contains(c, "rdmabench-nccl --collective copy --device 0 --peer-device 1 -b 1048576 -e 4194304 -f 2 -n 3") {
		t.Errorf("command %s", c)
	}
	for _, s := range cp.Samples {
		if s.Wrong == nil || *s.Wrong != 0 {
			t.Errorf("copy of %d B: wrong %v", s.Bytes, s.Wrong)
		}
	}
	if cp.Transport == nil || cp.Transport.Kind != "p2p" || cp.LineRate == nil || cp.LineRate.Source != schema.LineRateNVLink {
		t.Errorf("transport %+v, line rate %+v: want GPU peer-to-peer held to NVLink", cp.Transport, cp.LineRate)
	}
	if sr.Verdict != schema.VerdictPass || sr.BestBps <= 0 {
		t.Fatalf("sendrecv: %s %q", sr.Verdict, sr.Reason)
	}
	wfs := schema.WaterfallsOf(rep)
	if len(wfs) != 1 || wfs[0].Pair != "decode-0 ↔ prefill-0" || len(wfs[0].Layers) != 2 {
		t.Fatalf("waterfalls %+v", wfs)
	}
	low, top := wfs[0].Layers[0], wfs[0].Layers[1]
	if low.Layer != "GPU copy" || low.Test != "gpu-copy" || low.BestBps != cp.BestBps || low.BestBytes != cp.BestBytes {
		t.Errorf("bottom layer %+v, want GPU copy at %v bps", low, cp.BestBps)
	}
	if top.Layer != "nccl sendrecv" || top.BestBps != sr.BestBps || top.Below != "GPU copy" || top.PctOfBelow == nil ||
		math.Abs(*top.PctOfBelow-100*sr.BestBps/cp.BestBps) > 1e-9 {
		t.Errorf("top layer %+v, want nccl sendrecv at %v bps against the copy", top, sr.BestBps)
	}
	// No lineRate in the scenario: the waterfall carries the NVLink rate
	// its results were judged against, so "% LINE" is not "-".
	if wfs[0].LineRateBps != cp.LineRate.Bps || low.PctLineRate == nil || math.Abs(*low.PctLineRate-*cp.Efficiency) > 1e-9 {
		t.Errorf("waterfall line rate %v, copy %v%% of it; want the copy's %v (%v%%)", wfs[0].LineRateBps, low.PctLineRate, cp.LineRate.Bps, cp.Efficiency)
	}
}
