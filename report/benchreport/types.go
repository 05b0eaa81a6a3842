package benchreport

// Version is the Benchmark Report schema version written: llm-d-benchmark's
// v0.2 line (whose 0.2.1 revision accepts every 0.2 report unchanged).
const Version = "0.2"

// FabricSchemaVersion versions results.observability.rdma_fabric, the
// section that is ours.
const FabricSchemaVersion = "rdmabench.io/br-fabric/v1"

// ComponentLabel is the fabric's label in scenario.stack, which
// rdma_fabric.component_label references.
const ComponentLabel = "rdmabench-fabric"

// Report is a Benchmark Report v0.2 (only the parts a fabric run fills).
type Report struct {
	Version  string    `json:"version"`
	Run      Run       `json:"run"`
	Scenario *Scenario `json:"scenario,omitempty"`
	Results  Results   `json:"results"`
}

// Run identifies the run (run.uid is the schema's one required field).
type Run struct {
	UID         string   `json:"uid"`
	Time        *RunTime `json:"time,omitempty"`
	Description string   `json:"description,omitempty"`
}

// RunTime is the run's ISO-8601 start, end and duration.
type RunTime struct {
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	Duration string `json:"duration,omitempty"`
}

// Scenario is the stack the run measured: here the fabric alone.
type Scenario struct {
	Stack []Component `json:"stack"`
}

// Component is one part of the stack: metadata, standardized, native.
type Component struct {
	Metadata     ComponentMetadata `json:"metadata"`
	Standardized FabricComponent   `json:"standardized"`
	Native       ComponentNative   `json:"native"`
}

// ComponentMetadata labels a component; cfg_id is a hash of its
// configuration (the scenario file's sha256).
type ComponentMetadata struct {
	SchemaVersion string `json:"schema_version"`
	Label         string `json:"label"`
	CfgID         string `json:"cfg_id"`
	Description   string `json:"description,omitempty"`
}

// FabricComponent is a generic component (kind "generic", which admits
// fields beyond tool and tool_version): the fabric as rdmabench found it.
type FabricComponent struct {
	Kind        string    `json:"kind"`
	Tool        string    `json:"tool"`
	ToolVersion string    `json:"tool_version"`
	Backend     string    `json:"backend"`
	Nodes       []string  `json:"nodes,omitempty"`
	LineRate    *LineRate `json:"line_rate,omitempty"`
	// Tools are the benchmark tools' own versions, by name.
	Tools map[string]string `json:"tools,omitempty"`
	// Fingerprint is the environment: NIC firmware and MTU, kernel, NCCL, UCX.
	Fingerprint map[string]string `json:"fingerprint,omitempty"`
}

// ComponentNative is the component's own configuration: the scenario.
type ComponentNative struct {
	Config *NativeConfig `json:"config,omitempty"`
}

// NativeConfig names the scenario file and its hash.
type NativeConfig struct {
	ScenarioName   string `json:"scenario_name"`
	ScenarioFile   string `json:"scenario_file,omitempty"`
	ScenarioSHA256 string `json:"scenario_sha256,omitempty"`
}

// Results holds the fabric's measurements under observability.
type Results struct {
	Observability *Observability `json:"observability"`
}

// Observability is the schema's open section; rdma_fabric is ours.
type Observability struct {
	Fabric *Fabric `json:"rdma_fabric"`
}

// LineRate is the rate results were judged against.
type LineRate struct {
	GbitPerS float64 `json:"gbit_per_s"`
	Source   string  `json:"source"`
	Detail   string  `json:"detail,omitempty"`
}

// Fabric is what the run measured, per pod pair and summed up.
type Fabric struct {
	SchemaVersion  string `json:"schema_version"`
	ComponentLabel string `json:"component_label"`
	// ReportSchema is the report.json version the partial was written from.
	ReportSchema string          `json:"report_schema"`
	Verdicts     Verdicts        `json:"verdicts"`
	LineRate     *LineRate       `json:"line_rate,omitempty"`
	LinkMatrix   []MatrixSummary `json:"link_matrix"`
	Pairs        []Pair          `json:"pairs"`
	KVBudget     *KVBudget       `json:"kv_budget,omitempty"`
	EPBudget     []EPCost        `json:"ep_budget,omitempty"`
}

// Verdicts count the results by verdict.
type Verdicts struct {
	Total   int `json:"total"`
	Pass    int `json:"pass"`
	Fail    int `json:"fail"`
	Error   int `json:"error"`
	Skipped int `json:"skipped"`
	Invalid int `json:"invalid"`
}

// MatrixSummary is one test's pairs at a glance: how many, how many fell
// short, and the spread of their share of the line rate.
type MatrixSummary struct {
	Test  string `json:"test"`
	Tool  string `json:"tool"`
	Op    string `json:"op,omitempty"`
	Pairs int    `json:"pairs"`
	// Passed and Short count the pairs that met and missed their expectation.
	Passed int `json:"passed"`
	Short  int `json:"short"`
	// MinLineRatePct, MedianLineRatePct and MaxLineRatePct over the pairs
	// with a bandwidth and a line rate; WorstPair is the lowest ("from->to").
	MinLineRatePct    *float64 `json:"min_line_rate_pct,omitempty"`
	MedianLineRatePct *float64 `json:"median_line_rate_pct,omitempty"`
	MaxLineRatePct    *float64 `json:"max_line_rate_pct,omitempty"`
	WorstPair         string   `json:"worst_pair,omitempty"`
}

// Pair is one measured pod pair (a result): where, what, how fast, over
// what transport, and what its KV transfer costs a request.
type Pair struct {
	Test     string `json:"test"`
	Tool     string `json:"tool"`
	Op       string `json:"op,omitempty"`
	Backend  string `json:"backend,omitempty"`
	From     string `json:"from"`
	To       string `json:"to,omitempty"`
	FromNode string `json:"from_node,omitempty"`
	ToNode   string `json:"to_node,omitempty"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason,omitempty"`
	// GbitPerS is the headline bandwidth (nccl: bus bandwidth).
	GbitPerS         *float64 `json:"gbit_per_s,omitempty"`
	LineRateGbitPerS *float64 `json:"line_rate_gbit_per_s,omitempty"`
	LineRatePct      *float64 `json:"line_rate_pct,omitempty"`
	// LatencyUS is the smallest size's average latency, for latency tools.
	LatencyUS *float64   `json:"latency_us,omitempty"`
	Transport *Transport `json:"transport,omitempty"`
	// PathVerified: the NICs' port counters show the bytes crossed them.
	PathVerified *bool `json:"path_verified,omitempty"`
	// SameMachine names the node both sides ran on: not a fabric figure.
	SameMachine string   `json:"same_machine,omitempty"`
	KVTransfer  []KVCost `json:"kv_transfer,omitempty"`
}

// Transport is the evidence of the path the bytes took.
type Transport struct {
	Kind     string   `json:"kind"`
	Source   string   `json:"source,omitempty"`
	Detail   string   `json:"detail,omitempty"`
	Devices  []string `json:"devices,omitempty"`
	GDR      *bool    `json:"gdr,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
}

// KVCost is one request's KV transfer at one context length: the bytes of
// the request and of a decode rank's share, and TTFTms, the time moving
// that share takes, which is what the transfer adds to time-to-first-token.
// Measured: nixlbench timed one request so shaped; else it is computed from
// a bandwidth. Missing: a measured source had no result at this length.
type KVCost struct {
	ContextTokens int     `json:"context_tokens"`
	RequestBytes  int64   `json:"request_bytes"`
	RankBytes     int64   `json:"rank_bytes"`
	TTFTms        float64 `json:"ttft_ms"`
	Measured      bool    `json:"measured"`
	Missing       bool    `json:"missing,omitempty"`
}

// EPCost is what DeepEP's dispatch + combine adds for one kernel set of a
// deepep_probe test: one MoE layer, each phase at its slowest rank (named),
// × the model's MoE layers, per output token (stage decode: TPOT) or per
// prefill pass (stage prefill: TTFT).
type EPCost struct {
	Test          string  `json:"test"`
	Stage         string  `json:"stage"`
	Kernels       string  `json:"kernels"`
	Ranks         int     `json:"ranks"`
	TokensPerRank int64   `json:"tokens_per_rank"`
	DispatchUS    float64 `json:"dispatch_us"`
	DispatchRank  int     `json:"dispatch_rank"`
	CombineUS     float64 `json:"combine_us"`
	CombineRank   int     `json:"combine_rank"`
	MoELayers     int     `json:"moe_layers"`
	Ms            float64 `json:"ms"`
}

// KVBudget is the run's KV budget: per bandwidth source (nixlbench per
// backend at the worst pair, the best ib_write_bw, the line rate), what a
// request's transfer adds to TTFT per context length.
type KVBudget struct {
	Model         string     `json:"model,omitempty"`
	BytesPerToken int64      `json:"bytes_per_token"`
	RankShare     float64    `json:"rank_share"`
	Sources       []KVSource `json:"sources"`
}

// KVSource is one bandwidth the transfer is costed at.
type KVSource struct {
	Source   string   `json:"source"`
	Backend  string   `json:"backend,omitempty"`
	Test     string   `json:"test,omitempty"`
	GbitPerS float64  `json:"gbit_per_s"`
	Costs    []KVCost `json:"costs"`
}
