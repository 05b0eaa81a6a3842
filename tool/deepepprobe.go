package tool

import "fmt"

// DeepEPProbe is rdmabench's own DeepEP probe (cmd/rdmabench-deepep): the
// expert-parallel dispatch and combine of WideEP serving, driven through
// DeepEP V1's Python API as vLLM's deepep_high_throughput (normal kernels,
// prefill) and deepep_low_latency (decode) backends drive it, with the
// serving image's python3, torch and deep_ep; one process per GPU of every
// rank's endpoint, launched through torch.distributed's env contract (no
// MPI). DeepEP's own tests, where an image has them, are the cross-check.
const DeepEPProbe = "deepep_probe"

// FamilyDeepEP reads the probe's per-rank lines and DeepEP's own tests'
// output (parsers.ParseDeepEP).
const FamilyDeepEP Family = "deepep"

// DeepEP probe's choices: which kernel sets (vLLM's two backends, or both
// in turn) and the dispatch's data type (combine is BF16 in DeepEP).
var (
	DeepEPModes  = []string{"normal", "low_latency", "both"}
	DeepEPDtypes = []string{"fp8", "bf16"}
)

// DeepSeek-R1's MoE shape, the probe's defaults (its --help says the same):
// hidden size, experts chosen per token, routed experts, tokens per rank of
// a prefill batch (normal kernels) and of a decode batch (low latency).
const (
	DefaultDeepEPHidden   = 7168
	DefaultDeepEPTopK     = 8
	DefaultDeepEPExperts  = 256
	DefaultDeepEPTokens   = 4096
	DefaultDeepEPLLTokens = 128
	// DefaultDeepEPMoELayers: DeepSeek-R1's MoE layers (58 of its 61; the
	// first three are dense), what one layer's dispatch + combine is
	// multiplied by in the EP budget.
	DefaultDeepEPMoELayers = 58
)

var deepEPProbe = Spec{Name: DeepEPProbe, Family: FamilyDeepEP, Programs: []string{"rdmabench-deepep"}, Metric: MetricBandwidth,
	Args: []Arg{
		{Key: "mode", Kind: KindString, Always: true, OneOf: DeepEPModes, What: "DeepEP kernel sets", Default: fixed("both")},
		{Key: "hidden", Kind: KindInt, Min: 128, Hint: "the model's hidden size (DeepSeek-R1: 7168), a multiple of 128", Check: multipleOf128},
		{Key: "topk", Kind: KindInt, Min: 1, Hint: "experts each token is routed to (DeepSeek-R1: 8)"},
		{Key: "experts", Kind: KindInt, Min: 1, Hint: "routed experts, a multiple of the ranks (DeepSeek-R1: 256)"},
		{Key: "tokens", Kind: KindInt, Min: 1, Hint: "tokens per rank of the normal kernels (a prefill batch; default 4096)"},
		{Key: "llTokens", Kind: KindInt, Min: 1, Hint: "tokens per rank of the low-latency kernels (a decode batch; default 128)"},
		{Key: "dtype", Kind: KindString, Always: true, OneOf: DeepEPDtypes, What: "DeepEP dispatch types", Default: fixed("fp8")},
		{Key: "sms", Kind: KindInt, Min: 2, Hint: "SMs of the normal kernels, even (vLLM: 20, DeepEP's tests: 24)", Check: even},
		{Key: "moeLayers", Kind: KindInt, Min: 1, Hint: "the model's MoE layers, each one dispatch and one combine per forward pass (DeepSeek-R1: 58 of 61; default 58)"},
		argIterations, argExtra},
	ArgRules:   []Rule{topkWithinExperts},
	Expect:     []string{"minBandwidth", "maxLatency"},
	Collective: true, DefaultPort: 29600, Source: SourceBundle, ImageFamily: "deepep",
	Install:     "use an image with python3, torch and DeepEP V1 (deep_ep, NVSHMEM: llm-d's wide-EP image) and rdmabench-deepep on PATH (rdmabench's bundle)",
	HostInstall: "install torch and DeepEP V1 (github.com/deepseek-ai/DeepEP: python3 setup.py install, with NVSHMEM) and put rdmabench-deepep (make build: bin/rdmabench-deepep) on PATH",
	gpu:         func(Settings) bool { return true }}

// multipleOf128: DeepEP's FP8 scales cover 128 channels each.
func multipleOf128(x Value) (msg, hint string) {
	if x.Int%128 != 0 {
		return fmt.Sprintf("hidden %d is not a multiple of 128", x.Int), "DeepEP casts to FP8 per 128 channels: 7168 (DeepSeek-R1), 4096, 5120 …"
	}
	return "", ""
}

// even: DeepEP's normal kernels pair their SMs (Buffer.set_num_sms).
func even(x Value) (msg, hint string) {
	if x.Int%2 != 0 {
		return fmt.Sprintf("sms %d is odd", x.Int), "DeepEP's normal kernels take an even number of SMs (20, 24)"
	}
	return "", ""
}

// topkWithinExperts: a token cannot be routed to more experts than exist.
func topkWithinExperts(v Values) []Problem {
	k, _ := v.Get("topk").(int)
	experts, _ := v.Get("experts").(int)
	if experts <= 0 {
		experts = DefaultDeepEPExperts
	}
	if k <= experts {
		return nil
	}
	return []Problem{{Key: "topk", Msg: fmt.Sprintf("topk %d is more than the %d experts", k, experts),
		Hint: "topk is how many of the experts each token is routed to"}}
}
