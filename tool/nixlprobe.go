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
	Args: []Arg{nixlBackend, nixlBackends, {Key: "perRequest", Kind: KindBool}, nixlProbeOp,
		nixlSegment("initiatorSeg"), nixlSegment("targetSeg"), argMinSize, argMaxSize,
		argIterations, argTransports, argExtra},
	ArgRules:  []Rule{nixlBackendsOnce, nixlBackendsNotEmpty, sizeRange, nixlPerRequest},
	Expect:    append(append([]string{}, bwExpect...), "maxLatency"),
	NeedsRDMA: true, SelectsTransport: true, Directional: true, GPUMemoryOverRDMA: true, KVTransfer: true,
	BackendArg: "backend", waterfall: nixlLayer,
	// NIXL's own listener port (nixl DEFAULT_COMM_PORT): the probe opens
	// none, its metadata goes through etcd; the planner numbers jobs by it.
	DefaultPort: 5555,
	Source:      SourceBundle, ImageFamily: "nixl",
	Install:     "use an image with python3 and NIXL's Python package (vLLM's and llm-d's serving images have both) and rdmabench-nixl on PATH (rdmabench's bundle)",
	HostInstall: "install python3 and NIXL's Python package (pip install nixl) and put rdmabench-nixl (make build: bin/rdmabench-nixl) on PATH",
	gpu: func(a Settings) bool {
		return strings.EqualFold(a.InitiatorSeg, "VRAM") || strings.EqualFold(a.TargetSeg, "VRAM")
	}}

// nixlProbeOp: vLLM's NixlConnector has decode READ prefill's blocks.
var nixlProbeOp = Arg{Key: "op", Kind: KindString, Always: true, OneOf: NixlOps, What: "NIXL ops", Default: fixed(DefaultNixlRequestOp)}
