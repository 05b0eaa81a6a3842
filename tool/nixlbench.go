package tool

import "strings"

// Nixlbench is NIXL's benchmark: the KV-cache transfer of disaggregated
// serving.
const Nixlbench = "nixlbench"

var nixlbench = Spec{Name: Nixlbench, Family: FamilyNixlbench, Programs: []string{"nixlbench"}, Metric: MetricBandwidth,
	Args: []string{"backend", "backends", "runtime", "perRequest", "op", "initiatorSeg", "targetSeg",
		"minSize", "maxSize", "maxBatch", "iterations", "transports", "extra"},
	Expect:    append(append([]string{}, bwExpect...), "maxLatency"),
	NeedsRDMA: true, SelectsTransport: true, DefaultPort: 12345, Directional: true, GPUMemoryOverRDMA: true, KVTransfer: true,
	Source: SourceServing, ImageFamily: "nixl",
	Install: "use an image with NIXL and nixlbench built with its ETCD runtime (your serving image, or NIXL's own nixlbench container)",
	gpu: func(a Settings) bool {
		return strings.EqualFold(a.InitiatorSeg, "VRAM") || strings.EqualFold(a.TargetSeg, "VRAM")
	}}
