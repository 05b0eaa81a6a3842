package tool

import (
	"slices"
	"strings"
)

// A pair's waterfall is its path measured layer by layer, from raw RDMA on
// host memory up to NCCL. Which layer a tool's result measures is the
// tool's fact (Spec.waterfall); the report only orders the layers.

// Waterfall levels, lowest first; NIXL backends share one.
const (
	LevelHostRDMA = 1 + iota
	LevelGPURDMA
	LevelUCX
	LevelNIXL
	LevelNCCL
)

// LevelGPUCopy is the GPU peer copy's level: GPU memory moved by hardware
// alone, as GPU RDMA is between hosts (the NIC), here on one host (the
// copy engines over NVLink or PCIe), so the two share a level below UCX.
// Report.json keeps the numbers, so no level above moves for it.
const LevelGPUCopy = LevelGPURDMA

// LayerOf is what the waterfall reads of a result.
type LayerOf struct {
	// Program is the binary that measured (ib_write_bw, sendrecv_perf).
	Program string
	Family  Family
	// Op, Backend and Commands are the result's (its command lines tell
	// a run on GPU memory).
	Op, Backend string
	Commands    []string
}

// WaterfallLayer says which layer of a pair's waterfall a result measures:
// its name and level; ok false for none (latency tools, other
// collectives).
func WaterfallLayer(r LayerOf) (name string, level int, ok bool) {
	for i := range table {
		if w := table[i].waterfall; w != nil {
			if name, level, ok = w(r); ok {
				return name, level, ok
			}
		}
	}
	return "", 0, false
}

// writeBWLayer: the waterfall's first layers are ib_write_bw alone
// (writes), on host memory, then on GPU memory (--use_cuda).
func writeBWLayer(r LayerOf) (string, int, bool) {
	switch {
	case r.Program != IBWriteBW:
		return "", 0, false
	case slices.ContainsFunc(r.Commands, func(c string) bool { return strings.Contains(c, "--use_cuda") }):
		return "ib_write_bw GPU", LevelGPURDMA, true
	}
	return "ib_write_bw host", LevelHostRDMA, true
}

func ucxLayer(r LayerOf) (string, int, bool) {
	return "ucx_perftest", LevelUCX, r.Family == FamilyUCXPerftest
}

// nixlLayer: one layer per NIXL backend (and program: nixlbench or the
// NIXL probe, which measure the same layer two ways).
func nixlLayer(r LayerOf) (string, int, bool) {
	b := r.Backend
	if b == "" {
		b = DefaultNixlBackend
	}
	name := "nixlbench " + b
	// The NIXL probe (vLLM's way of driving NIXL), named by its tool (what a
	// result carries) or its program.
	if r.Program == NixlProbe || r.Program == "rdmabench-nixl" {
		name = "NIXL probe " + b
	}
	return name, LevelNIXL, r.Family == FamilyNixlbench
}

// ncclLayer: of the collectives, sendrecv alone moves one pair's bytes.
// A result's program is its test's tool (nccl, nccl_probe), so its
// command lines say the collective: sendrecv_perf, or the probe's
// --collective sendrecv.
func ncclLayer(r LayerOf) (string, int, bool) {
	return "nccl sendrecv", LevelNCCL, r.Family == FamilyNCCL &&
		(r.Program == NCCLProgram("sendrecv") || r.Op == "sendrecv" || commandsSay(r, NCCLProgram("sendrecv")+" ", "--collective sendrecv"))
}

// gpuCopyLayer: the GPU peer copy (gpu_copy, the probe's --collective copy).
func gpuCopyLayer(r LayerOf) (string, int, bool) {
	return "GPU copy", LevelGPUCopy, r.Family == FamilyNCCL && (r.Program == GPUCopy || commandsSay(r, "--collective copy"))
}

// commandsSay: some command line of the result holds one of the words.
func commandsSay(r LayerOf, words ...string) bool {
	return slices.ContainsFunc(r.Commands, func(c string) bool {
		return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(c+" ", w) })
	})
}
