package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// Serving is the LLM serving setup the fabric carries KV cache for
// (prefill → decode). Either a Model preset or the shape itself; fields
// written beside a preset override it.
type Serving struct {
	// Model is a preset of a public model's KV shape: llama-3.1-8b,
	// llama-3.1-70b, qwen2.5-72b, deepseek-v3.
	Model string `yaml:"model,omitempty" json:"model,omitempty" schema:"enum=models"`
	// Layers is the number of transformer layers (num_hidden_layers).
	Layers int `yaml:"layers,omitempty" json:"layers,omitempty"`
	// KVHeads is the number of key/value heads (num_key_value_heads).
	KVHeads int `yaml:"kvHeads,omitempty" json:"kvHeads,omitempty"`
	// HeadDim is the size of one head (hidden_size / num_attention_heads).
	HeadDim int `yaml:"headDim,omitempty" json:"headDim,omitempty"`
	// LatentDim replaces 2 × kvHeads × headDim for multi-head latent
	// attention (DeepSeek-V3: kv_lora_rank 512 + qk_rope_head_dim 64): one
	// latent vector per token and layer, shared by every head, so every
	// tensor-parallel rank holds all of it.
	LatentDim int `yaml:"latentDim,omitempty" json:"latentDim,omitempty"`
	// KVDtype is the KV cache element type: fp32, fp16, bf16 (default), fp8, int8.
	KVDtype string `yaml:"kvDtype,omitempty" json:"kvDtype,omitempty" schema:"enum=kvDtypes"`
	// ContextLengths are the prompt lengths, in tokens, to cost (default 8192, 32768, 131072).
	ContextLengths []int `yaml:"contextLengths,omitempty" json:"contextLengths,omitempty"`
	// PrefillTP and DecodeTP are the tensor-parallel sizes (default 1).
	PrefillTP int `yaml:"prefillTP,omitempty" json:"prefillTP,omitempty"`
	DecodeTP  int `yaml:"decodeTP,omitempty" json:"decodeTP,omitempty"`
	// BlockTokens is the KV page (block) size in tokens (default 16, vLLM's).
	BlockTokens int `yaml:"blockTokens,omitempty" json:"blockTokens,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// KVDtypes are the KV cache element types and their sizes in bytes.
var KVDtypes = []string{"fp32", "fp16", "bf16", "fp8", "int8"}

// KVDtypeBytes is the size of one element of a KV dtype (0 if unknown).
func KVDtypeBytes(dtype string) int {
	switch dtype {
	case "fp32":
		return 4
	case "fp16", "bf16":
		return 2
	case "fp8", "int8":
		return 1
	}
	return 0
}

// modelPresets are the KV shapes of public models, from each model's
// config.json on Hugging Face (the fields named in the comments):
var modelPresets = map[string]Serving{
	// meta-llama/Llama-3.1-8B: num_hidden_layers 32, num_key_value_heads 8,
	// hidden_size 4096 / num_attention_heads 32 = head_dim 128, bfloat16.
	"llama-3.1-8b": {Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"},
	// meta-llama/Llama-3.1-70B: num_hidden_layers 80, num_key_value_heads 8,
	// hidden_size 8192 / num_attention_heads 64 = head_dim 128, bfloat16.
	"llama-3.1-70b": {Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"},
	// Qwen/Qwen2.5-72B: num_hidden_layers 80, num_key_value_heads 8,
	// hidden_size 8192 / num_attention_heads 64 = head_dim 128, bfloat16.
	"qwen2.5-72b": {Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"},
	// deepseek-ai/DeepSeek-V3: num_hidden_layers 61, MLA with kv_lora_rank
	// 512 and qk_rope_head_dim 64: the cache holds one 576-element latent
	// per token and layer (not K and V per head), kept in bf16 by vLLM and
	// SGLang unless an fp8 KV cache is chosen.
	"deepseek-v3": {Layers: 61, LatentDim: 512 + 64, KVDtype: "bf16"},
}

// ModelPresetNames lists the serving.model presets, sorted.
func ModelPresetNames() []string {
	out := make([]string, 0, len(modelPresets))
	for k := range modelPresets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Defaults of a serving section.
var (
	DefaultContextLengths = []int{8192, 32768, 131072}
	DefaultBlockTokens    = 16
)

// Resolved is the serving setup with the preset and the defaults filled
// in: what the report costs.
func (s *Serving) Resolved() Serving {
	if s == nil {
		return Serving{}
	}
	out := modelPresets[s.Model]
	out.Model = s.Model
	if s.Layers > 0 {
		out.Layers = s.Layers
	}
	if s.KVHeads > 0 || s.HeadDim > 0 {
		if out.LatentDim > 0 { // K and V per head instead of an MLA preset's latent
			out.KVHeads, out.HeadDim, out.LatentDim = 0, 0, 0
		}
		if s.KVHeads > 0 {
			out.KVHeads = s.KVHeads
		}
		if s.HeadDim > 0 {
			out.HeadDim = s.HeadDim
		}
	}
	if s.LatentDim > 0 {
		out.LatentDim, out.KVHeads, out.HeadDim = s.LatentDim, 0, 0
	}
	if s.KVDtype != "" {
		out.KVDtype = s.KVDtype
	}
	if out.KVDtype == "" {
		out.KVDtype = "bf16"
	}
	out.ContextLengths = append([]int(nil), s.ContextLengths...)
	if len(out.ContextLengths) == 0 {
		out.ContextLengths = append([]int(nil), DefaultContextLengths...)
	}
	out.PrefillTP, out.DecodeTP, out.BlockTokens = max(s.PrefillTP, 1), max(s.DecodeTP, 1), s.BlockTokens
	if out.BlockTokens <= 0 {
		out.BlockTokens = DefaultBlockTokens
	}
	return out
}

// serving checks the serving section.
func (v *validator) serving() {
	s := v.s.Serving
	if s == nil {
		return
	}
	const p = "serving"
	if s.Model != "" {
		v.checkOneOf(p+".model", s.Model, "models", ModelPresetNames())
	}
	if s.LatentDim > 0 && (s.KVHeads > 0 || s.HeadDim > 0) {
		v.errf(p+".latentDim", "latentDim (MLA) replaces kvHeads and headDim: write one or the other",
			"latentDim together with kvHeads/headDim")
	}
	if s.KVDtype != "" {
		v.checkOneOf(p+".kvDtype", s.KVDtype, "KV dtypes", KVDtypes)
	}
	for _, f := range []struct {
		key string
		val int
	}{{"layers", s.Layers}, {"kvHeads", s.KVHeads}, {"headDim", s.HeadDim}, {"latentDim", s.LatentDim},
		{"prefillTP", s.PrefillTP}, {"decodeTP", s.DecodeTP}, {"blockTokens", s.BlockTokens}} {
		if v.pos.Has(p+"."+f.key) && f.val < 1 {
			v.errf(p+"."+f.key, "a whole number, 1 or more", "%s must be at least 1, not %d", f.key, f.val)
		}
	}
	for i, n := range s.ContextLengths {
		if n < 1 || n > 10_000_000 {
			v.errf(fmt.Sprintf("%s.contextLengths[%d]", p, i), "a prompt length in tokens, 1 to 10000000", "context length %d is out of range", n)
		}
	}
	r := s.Resolved()
	if (s.Model == "" || modelPresets[s.Model].Layers > 0) && r.LatentDim == 0 && (r.Layers == 0 || r.KVHeads == 0 || r.HeadDim == 0) {
		v.keyErrf(p, "name a preset (model: llama-3.1-70b; presets are: "+strings.Join(ModelPresetNames(), ", ")+") or give layers, kvHeads and headDim (or latentDim for MLA)",
			"the model's KV shape is incomplete")
	}
	if s.Model == "" && r.LatentDim > 0 && r.Layers == 0 {
		v.keyErrf(p, "give layers beside latentDim", "the model's KV shape is incomplete")
	}
	if r.KVHeads > 0 {
		for _, tp := range []struct {
			key string
			n   int
		}{{"prefillTP", r.PrefillTP}, {"decodeTP", r.DecodeTP}} {
			if tp.n%r.KVHeads != 0 && r.KVHeads%tp.n != 0 {
				v.errf(p+"."+tp.key, fmt.Sprintf("a TP size that divides %d KV heads, or a multiple of it", r.KVHeads),
					"%d KV heads cannot be split over %d ranks", r.KVHeads, tp.n)
			}
		}
	}
}

// KVLayout is how one request's KV cache moves from prefill to decode
// through vLLM's NIXL connector (vllm-project/vllm,
// vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py at
// 002a1057): each layer's cache is registered as regions of blocks, one
// descriptor per block and region ([K0, V0, K1, V1, …], or one latent
// region per layer under MLA; FlashInfer's shared K/V region still gets a
// descriptor each); a decode rank's descriptor covers the KV heads it holds
// (get_backend_aware_kv_block_len, add_remote_agent); and _read_blocks
// posts one READ per request and remote rank carrying regions × blocks
// descriptors (_get_block_descs_ids).
type KVLayout struct {
	// BytesPerToken is the KV cache of one token over all layers.
	BytesPerToken int64
	// RankShare is the fraction of a request's KV one decode rank pulls
	// (1/min(decodeTP, kvHeads); 1 for MLA, whose latent every rank holds).
	RankShare float64
	// BlockBytes is one descriptor: blockTokens of one region (a layer's K
	// or V) for the heads a rank reads.
	BlockBytes int64
	// Regions are the descriptors per block: K and V of every layer, or
	// one latent per layer under MLA.
	Regions int
	// BlockTokens is the KV page size in tokens.
	BlockTokens int
	// RemoteRanks is how many prefill ranks one decode rank reads from:
	// prefillTP/decodeTP where prefill splits the heads finer (each holds
	// part of the decode rank's heads), else 1.
	RemoteRanks int
}

// Layout is the KV layout of a resolved serving setup (Resolved).
func (s Serving) Layout(dtypeBytes int) KVLayout {
	l := KVLayout{RankShare: 1, BlockTokens: s.BlockTokens, RemoteRanks: 1}
	if s.LatentDim > 0 {
		l.BytesPerToken = int64(s.Layers) * int64(s.LatentDim) * int64(dtypeBytes)
		l.BlockBytes = int64(s.BlockTokens) * int64(s.LatentDim) * int64(dtypeBytes)
		l.Regions = s.Layers
		return l
	}
	l.BytesPerToken = int64(s.Layers) * 2 * int64(s.KVHeads) * int64(s.HeadDim) * int64(dtypeBytes)
	if s.KVHeads > 0 {
		l.RankShare = 1 / float64(min(max(s.DecodeTP, 1), s.KVHeads))
	}
	heads := max(1, s.KVHeads/max(s.PrefillTP, s.DecodeTP, 1))
	l.BlockBytes = int64(s.BlockTokens) * int64(heads) * int64(s.HeadDim) * int64(dtypeBytes)
	l.Regions = 2 * s.Layers
	if s.KVHeads > 0 {
		p, d := min(max(s.PrefillTP, 1), s.KVHeads), min(max(s.DecodeTP, 1), s.KVHeads)
		l.RemoteRanks = max(1, p/d)
	}
	return l
}

// Descriptors is how many descriptors a decode rank reads for a prompt of
// tokens: regions × the blocks the prompt fills, from each remote rank it
// reads from. vLLM posts one READ per remote rank; a pair test moves them
// all in one, so that the bytes are the rank's whole share.
func (l KVLayout) Descriptors(tokens int) int {
	if l.BlockTokens <= 0 || tokens <= 0 {
		return 0
	}
	return l.Regions * ((tokens + l.BlockTokens - 1) / l.BlockTokens) * max(l.RemoteRanks, 1)
}
