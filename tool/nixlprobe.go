package tool

import "strings"

// NixlProbe is rdmabench's own NIXL probe (cmd/rdmabench-nixl): the
// KV-cache transfer of disaggregated serving, driven through NIXL's
// Python API as vLLM's NixlConnector drives it (KV regions, one descriptor
// per block, a transfer per request, decode READs prefill's memory), with
// the serving image's python3 and nixl package; the agents' metadata goes
// through the run's etcd. No nixlbench needed; where the image has it,
// nixlbench is the cross-check.
const NixlProbe = "nixl_probe"

var nixlProbe = Spec{Name: NixlProbe, Family: FamilyNixlbench, Programs: []string{"rdmabench-nixl"}, Metric: MetricBandwidth,
	Args: []string{"backend", "backends", "perRequest", "op", "initiatorSeg", "targetSeg",
		"minSize", "maxSize", "iterations", "transports", "extra"},
	Expect:    append(append([]string{}, bwExpect...), "maxLatency"),
	NeedsRDMA: true, SelectsTransport: true, Directional: true, GPUMemoryOverRDMA: true, KVTransfer: true,
	Source: SourceBundle, ImageFamily: "nixl",
	Install: "use an image with python3 and NIXL's Python package (vLLM's and llm-d's serving images have both) and rdmabench-nixl on PATH (rdmabench's bundle)",
	gpu: func(a Settings) bool {
		return strings.EqualFold(a.InitiatorSeg, "VRAM") || strings.EqualFold(a.TargetSeg, "VRAM")
	}}
