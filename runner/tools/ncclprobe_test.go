package tools

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// TestNCCLProbeFindsNCCL judges rdmabench-nccl --find's lines (the probe's
// own output, as its tests print it over the stand-ins).
func TestNCCLProbeFindsNCCL(t *testing.T) {
	p := NCCLProbeFindsNCCL()
	for out, want := range map[string]struct {
		status   ProbeStatus
		evidence string
	}{
		"nccl=/opt/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2\nnccl-found-by=torch\nnccl-version=2.28.9\n":                                                      {ProbePass, "NCCL 2.28.9 at /opt/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2 (found by torch)"},
		"nccl=notfound\nnccl-error=cannot load libnccl.so.2: no such file\nlooked=/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2; the dynamic loader's libnccl.so.2\n": {ProbeFail, "looked at: /usr/lib/python3/dist-packages"},
		"nccl=noprobe\n": {ProbeFail, "rdmabench-nccl is not on PATH"},
		"garbage":        {ProbeUnknown, "garbage"},
	} {
		st, ev, _ := p.Judge(out)
		if st != want.status || !strings.Contains(ev, want.evidence) {
			t.Errorf("%q: %v %q, want %v containing %q", out, st, ev, want.status, want.evidence)
		}
	}
}

// TestNixlProbePluginPerBackend: each backend of a nixl_probe test has its
// plugin check, scoped to its legs; a missing one fails with the plugins
// the image has and the fix.
func TestNixlProbePluginPerBackend(t *testing.T) {
	test := &scenarios.Test{Tool: "nixl_probe", Args: scenarios.Args{Backends: []string{"UCX", "UCCL"}}}
	probes := ProbesOf(test, "nixl_probe")
	var ids []string
	for _, p := range probes {
		ids = append(ids, p.ID+"@"+p.Backend)
	}
	if got := strings.Join(ids, " "); got != "binary-rdmabench-nixl@ nixl-probe-finds-nixl@ nixl-probe-plugin-UCX@UCX nixl-probe-plugin-UCCL@UCCL" {
		t.Fatalf("probes: %s", got)
	}
	out := "python=/usr/bin/python3\nnixl=/x/nixl\nnixl-version=0.9.0\nplugins=POSIX,UCX\n"
	if st, _, _ := probes[2].Judge(out); st != ProbePass {
		t.Errorf("UCX: %v", st)
	}
	st, ev, fix := probes[3].Judge(out)
	if st != ProbeFail || !strings.Contains(ev, "has no UCCL plugin (it has POSIX,UCX)") || !strings.Contains(fix, "drop UCCL") {
		t.Errorf("UCCL: %v %q %q", st, ev, fix)
	}
}

// TestNixlProbeTorchForVRAM: a nixl_probe test with a VRAM segment checks
// that the image's python3 imports torch (its VRAM regions are torch
// tensors), a DRAM test does not; no torch fails with the fix.
func TestNixlProbeTorchForVRAM(t *testing.T) {
	dram := ProbesOf(&scenarios.Test{Tool: "nixl_probe"}, "nixl_probe")
	vram := ProbesOf(&scenarios.Test{Tool: "nixl_probe", Args: scenarios.Args{InitiatorSeg: "VRAM", TargetSeg: "VRAM"}}, "nixl_probe")
	if len(vram) != len(dram)+1 || vram[2].ID != "nixl-probe-torch" {
		t.Fatalf("DRAM %d probes, VRAM %d (%s)", len(dram), len(vram), vram[2].ID)
	}
	judge := vram[2].Judge
	if st, ev, _ := judge("python=/usr/bin/python3\nnixl=/x/nixl\ntorch=2.11.0 cuda=13.0\n"); st != ProbePass || ev != "torch 2.11.0 cuda=13.0 with /usr/bin/python3" {
		t.Errorf("torch: %v %q", st, ev)
	}
	if st, ev, fix := judge("python=/usr/bin/python3\nnixl=/x/nixl\ntorch=none\n"); st != ProbeFail || !strings.Contains(ev, "cannot import torch") || !strings.Contains(fix, "DRAM segments") {
		t.Errorf("no torch: %v %q %q", st, ev, fix)
	}
	if st, _, _ := judge("python=noprobe\n"); st != ProbeUnknown {
		t.Errorf("no probe: %v", st)
	}
}

// TestNixlProbeCAPIForNative: --native checks NIXL's C API instead of
// torch (its VRAM comes from the CUDA driver); a NIXL without it fails with
// the fix; an older probe that does not look says unknown.
func TestNixlProbeCAPIForNative(t *testing.T) {
	probes := ProbesOf(&scenarios.Test{Tool: "nixl_probe", Args: scenarios.Args{InitiatorSeg: "VRAM", TargetSeg: "VRAM", Extra: []string{"--native"}}}, "nixl_probe")
	var ids []string
	for _, p := range probes {
		ids = append(ids, p.ID)
	}
	if got := strings.Join(ids, " "); got != "binary-rdmabench-nixl nixl-probe-finds-nixl binary-rdmabench-nccl nixl-probe-capi nixl-probe-plugin-UCX" {
		t.Fatalf("probes: %s", got)
	}
	judge := probes[3].Judge
	if st, ev, _ := judge("python=/usr/bin/python3\nnixl=/x/nixl\nnixl-capi=/opt/nixl/lib/libnixl_capi.so\n"); st != ProbePass || ev != "NIXL's C API at /opt/nixl/lib/libnixl_capi.so" {
		t.Errorf("capi: %v %q", st, ev)
	}
	if st, ev, fix := judge("python=/usr/bin/python3\nnixl=/x/nixl\nnixl-version=0.9.0\nnixl-capi=notfound\n"); st != ProbeFail ||
		!strings.Contains(ev, "NIXL 0.9.0 at /x/nixl has no libnixl_capi.so") || !strings.Contains(fix, "drop --native") {
		t.Errorf("no capi: %v %q %q", st, ev, fix)
	}
	if st, _, _ := judge("python=/usr/bin/python3\nnixl=/x/nixl\n"); st != ProbeUnknown {
		t.Errorf("not looked for: %v", st)
	}
}
