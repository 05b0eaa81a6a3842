// Package schema is report.json, the single source of truth of a run: its
// versioned types, Load and Save, the upgrade of older versions, its JSON
// Schema, and the pure analysis it carries (waterfalls, low pairs, the KV
// and EP budgets, sample coverage) with how a result's figures read. It renders
// nothing and imports no renderer: the judge, the path proof, preflight and
// NIC discovery read and fill results through it, and report's other
// packages render them (html, text, export) or set runs side by side
// (compare, history).
package schema

import (
	"time"

	"github.com/rdmabench/rdmabench/parsers"
)

// Version of report.json and of each results.jsonl line (their
// schemaVersion). Bump it on any change a reader must know about, and teach
// Upgrade (legacy.go) the old one.
//
// v2: every result carries its tool's family and its headline metric.
const Version = "rdmabench.io/report/v2"

// Verdicts.
const (
	VerdictPass    = "pass"    // met every expectation
	VerdictFail    = "fail"    // ran, measured, fell short of an expectation
	VerdictError   = "error"   // the tool or the harness failed: no measurement
	VerdictSkipped = "skipped" // not run here (no RDMA device, tool missing …)
	// VerdictInvalid: measured, but the RDMA port counters show the traffic
	// did not cross the device the test names (TCP fallback, another NIC).
	VerdictInvalid = "invalid"
)

// Report is one run.
type Report struct {
	SchemaVersion string         `json:"schemaVersion"`
	Run           RunMeta        `json:"run"`
	Endpoints     []EndpointInfo `json:"endpoints"`
	Results       []Result       `json:"results"`
	Summary       Summary        `json:"summary"`

	// Waterfalls, LowPairs, KVBudget and EPBudget are derived from Results by pure
	// functions (Derive, AnalyzeLowPairs) and kept here for other readers.
	Waterfalls []Waterfall       `json:"waterfalls,omitempty"`
	LowPairs   []LowPairAnalysis `json:"lowPairs,omitempty"`
	Serving    *ServingSetup     `json:"serving,omitempty"`
	KVBudget   *KVBudget         `json:"kvBudget,omitempty"`
	// EPBudget is what DeepEP's dispatch + combine adds per output token
	// (decode) and per prefill pass, from the DeepEP probe's results.
	EPBudget *EPBudget `json:"epBudget,omitempty"`
	// RailReach is each cross-rail test's any-to-any verdict (rping's
	// crossRails: WideEP-ready, or the rail pairs that cannot reach each
	// other) and the HCA settings that follow (BuildRailReach).
	RailReach []RailReach `json:"railReach,omitempty"`
	// Samples are the sampled all-to-all tests (tests[].sample): what
	// share of each matrix this run measured.
	Samples []SampleCoverage `json:"samples,omitempty"`
	// Preflight is what was checked on each endpoint before the first test.
	Preflight []PreflightEndpoint `json:"preflight,omitempty"`
}

// RunMeta describes the run as a whole.
type RunMeta struct {
	ID           string    `json:"id"`
	Scenario     string    `json:"scenario"`     // metadata.name
	ScenarioFile string    `json:"scenarioFile"` // path as given
	ScenarioHash string    `json:"scenarioHash"` // sha256 of the file bytes
	Start        time.Time `json:"start"`
	End          time.Time `json:"end,omitempty"`
	Version      string    `json:"rdmabenchVersion"`
	Backend      string    `json:"backend"`
	Hosts        []string  `json:"hosts,omitempty"`
	// Nodes are the Kubernetes nodes the endpoints ran on (kube backend).
	Nodes []string `json:"nodes,omitempty"`
	// ToolVersions maps tool name to the version it reported.
	ToolVersions map[string]string `json:"toolVersions,omitempty"`
	// Fingerprint of the environment where known, by the Fingerprint*
	// keys: nic.firmware, nic.mtu, kernel, nccl.version, ucx.version.
	Fingerprint map[string]string `json:"fingerprint,omitempty"`
	// SharedPorts are the endpoints that share a NIC port on one machine
	// (a perNode pool with one network: VFs of one PF, or a shared device).
	SharedPorts []SharedPort `json:"sharedPorts,omitempty"`
	// LineRate is the scenario's line rate as resolved for the run.
	LineRate *LineRate `json:"lineRate,omitempty"`
	// Profile says what a profile changed in the scenario for this run
	// (rdmabench run --quick: fewer sizes and repetitions, a first look);
	// empty for the scenario as written.
	Profile string `json:"profile,omitempty"`
	// Interrupted is true when the run was cut short (Ctrl-C, crash);
	// Results then holds every result finished before.
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
}

// EndpointInfo is where one endpoint ran.
type EndpointInfo struct {
	Name    string `json:"name"`
	Pool    string `json:"pool"`
	Host    string `json:"host,omitempty"`
	Node    string `json:"node,omitempty"`
	Pod     string `json:"pod,omitempty"`
	Device  string `json:"device,omitempty"`
	Address string `json:"address,omitempty"`
	// Network is where Address comes from: the Multus network
	// ("namespace/name") whose Interface carried the tests, or "pod network"
	// when the pod has no secondary network (kube backend).
	Network   string `json:"network,omitempty"`
	Interface string `json:"interface,omitempty"`
	// Port and GIDIndex are the RDMA port and GID the tools were given;
	// DeviceFrom how the device was chosen ("network-status device-info:
	// rdma-device mlx5_3", "netdev net1", "GID of 10.9.1.1", "scenario");
	// DataDevice the data interface's own device where the scenario named
	// another.
	Port       int    `json:"port,omitempty"`
	GIDIndex   *int   `json:"gidIndex,omitempty"`
	DeviceFrom string `json:"deviceFrom,omitempty"`
	DataDevice string `json:"dataDevice,omitempty"`
	// Rails are every secondary network of a multi-rail pod, rail 0 the
	// data network above (perftest measures them rail i to rail i).
	Rails []Rail `json:"rails,omitempty"`
	// Affinity is each GPU the endpoint uses and the NIC nearest to it
	// among its own (its device, or on a multi-rail pod the nearest
	// rail), from its machine's nvidia-smi topo -m; what a GPU process's
	// UCX_NET_DEVICES and DeepEP's GPU-to-HCA mapping follow.
	Affinity []Affinity `json:"affinity,omitempty"`
}

// Rail is one secondary network of a multi-rail pod and the RDMA device
// behind it; NoDevice says why none serves it.
type Rail struct {
	Network    string  `json:"network"`
	Interface  string  `json:"interface,omitempty"`
	Address    string  `json:"address,omitempty"`
	Device     string  `json:"device,omitempty"`
	Port       int     `json:"port,omitempty"`
	GIDIndex   *int    `json:"gidIndex,omitempty"`
	RateBps    float64 `json:"rateBps,omitempty"`
	DeviceFrom string  `json:"deviceFrom,omitempty"`
	NoDevice   string  `json:"noDevice,omitempty"`
}

// Line rate sources.
const (
	LineRateDeclared = "declared" // written in the scenario
	LineRateNVLink   = "nvlink"   // the GPUs' NVLink per direction (a collective on one host)
	LineRateNIC      = "nic"      // read from the NIC (lineRate: auto)
	LineRateNone     = "none"     // unknown: efficiency is not computed
)

// LineRate is the rate results are judged against.
type LineRate struct {
	Bps    float64 `json:"bps"`
	Source string  `json:"source"`
	// Detail says where it came from: "scenario", "mlx5_0 port 1: 400 Gb/sec (4X NDR)", …
	Detail string `json:"detail,omitempty"`
}

// Result is one leg of one job: one tool execution (with repetitions).
type Result struct {
	SchemaVersion string `json:"schemaVersion,omitempty"` // set on results.jsonl lines
	JobID         string `json:"jobId"`
	Leg           int    `json:"leg"`
	Test          string `json:"test"`
	Tool          string `json:"tool"`
	// Family is the tool's family as the tool table (runner/tools) names
	// it: perftest, rping, nixlbench, nccl-tests, ucx_perftest, iperf3.
	// Renderers group and format by it, never by the tool's name.
	Family parsers.Family `json:"family"`
	// Metric is the headline figure the result is judged, charted and
	// compared by (bw_avg_bps, busbw_bps, lat_avg_us, pings), decided by
	// the tool table from the tool and the test's arguments.
	Metric  parsers.Metric `json:"metric"`
	Pattern string         `json:"pattern,omitempty"`
	Round   int            `json:"round"`
	Variant string         `json:"variant,omitempty"`
	// Backend is the transport backend (NIXL: UCX, UCCL, LIBFABRIC; UCX_TLS).
	Backend string `json:"backend,omitempty"`
	// RequestTokens is the prompt length whose KV cache the leg moved as
	// one request, shaped as vLLM's NIXL connector moves it (nixlbench
	// args.perRequest); 0 for other results.
	RequestTokens int `json:"requestTokens,omitempty"`
	// MoELayers is the model's MoE layers the EP budget multiplies one
	// layer's dispatch + combine by (deepep_probe's args.moeLayers, its
	// default filled in); 0 for other results.
	MoELayers int `json:"moeLayers,omitempty"`
	// Rail is the rail of multi-rail endpoints the leg ran on (0: the data
	// network); PeerRail, on a cross-rail leg (rping's crossRails), the To
	// endpoint's rail, Rail being the From endpoint's (RailReach reads them).
	Rail     int    `json:"rail,omitempty"`
	PeerRail *int   `json:"peerRail,omitempty"`
	Op       string `json:"op,omitempty"`
	// Program is the binary whose output gave the figures, where it is
	// not the tool's own (rdmabench-nixl for nixl_probe, rdmabench-nccl
	// for nccl_probe); Libraries the versions of the libraries it loaded
	// as it reported them (nixl, ucx, nccl, torch, python).
	Program   string            `json:"program,omitempty"`
	Libraries map[string]string `json:"libraries,omitempty"`

	From  string   `json:"from,omitempty"`
	To    string   `json:"to,omitempty"`
	Ranks []string `json:"ranks,omitempty"`
	// NRanks is the collective's rank count (the GPUs of its endpoints
	// summed); 0 in reports written before it existed, where Ranks counts.
	NRanks int `json:"n_ranks,omitempty"`
	// Endpoints are where this result's sides ran (node, device, address),
	// copied from the run's endpoints so that one result reads on its own.
	Endpoints []ResultEndpoint `json:"endpoints,omitempty"`

	// Samples are the per-size figures, averaged over repetitions; a tool
	// that reports per rank and phase (the DeepEP probe) has one per rank
	// and phase (Sample.Phase, Sample.Rank).
	Samples []parsers.Sample `json:"samples"`
	// Repetitions holds each repetition's own measurement.
	Repetitions []Repetition `json:"repetitions,omitempty"`
	// Stats of the headline metric per size across repetitions.
	Stats []SizeStats `json:"stats,omitempty"`

	// BestBps is the headline bandwidth: the best size's average bandwidth
	// (nccl: the best bus bandwidth). 0 for latency-only tools.
	BestBps   float64   `json:"bestBps,omitempty"`
	BestBytes int64     `json:"bestBytes,omitempty"`
	LineRate  *LineRate `json:"lineRate,omitempty"`
	// Efficiency is BestBps as a percent of the line rate.
	Efficiency *float64 `json:"efficiencyPct,omitempty"`
	// Expectation is the rule judged, in words: ">= 90% of line rate".
	Expectation string `json:"expectation,omitempty"`

	Verdict    string             `json:"verdict"`
	Reason     string             `json:"reason,omitempty"`
	ErrorClass parsers.ErrorClass `json:"errorClass,omitempty"`
	Transport  *parsers.Transport `json:"transport,omitempty"`
	// Requires is the transport the test asked for ("rdma" or "tcp"), so
	// that TCP is called a fallback only where RDMA was required.
	Requires string `json:"requires,omitempty"`

	// RawOutputs are paths, relative to the run folder, of every side's output.
	RawOutputs []string  `json:"rawOutputs,omitempty"`
	Commands   []string  `json:"commands,omitempty"`
	Started    time.Time `json:"started"`
	// Seconds is the leg's wall time; ToolSeconds the time inside the tools.
	Seconds     float64 `json:"seconds"`
	ToolSeconds float64 `json:"toolSeconds,omitempty"`
	// Retest numbers a low pair's rerun after its matrix (1, 2 …; 0 for the
	// matrix's own run), see expect.lowPair.
	Retest int `json:"retest,omitempty"`
	// Path is the proof of the path: the RDMA port counters of each
	// endpoint's device, read before and after the leg.
	Path *PathProof `json:"path,omitempty"`
	// Affinity is the PCIe relation (nvidia-smi topo -m: PIX, PXB, PHB,
	// NODE, SYS) of each GPU the leg's endpoints use to the NIC they were
	// given; judged by expect.affinity, a SYS pair noted in Reason.
	Affinity []Affinity `json:"affinity,omitempty"`
	// SameMachine is the node (or ssh host) every side of the leg ran on:
	// the traffic did not cross the fabric, so the figure is not a
	// fabric figure. Empty when the sides ran apart (or it is unknown).
	SameMachine string `json:"sameMachine,omitempty"`
	// SharedPort says which of the leg's endpoints sent on a NIC port that
	// another test used at the same time through another endpoint of its
	// machine (run.sharedPorts): the figure is a share of the port.
	SharedPort string `json:"sharedPort,omitempty"`
}

// SharedPort is endpoints of one machine (a node, an ssh host) that send
// on one NIC port: VFs of one PF, or one device shared by several pods.
type SharedPort struct {
	Machine   string   `json:"machine"`
	Port      string   `json:"port"` // "PCI 0000:3b:00.0 port 1", "rxe0 port 1"
	Endpoints []string `json:"endpoints"`
}

// ResultEndpoint is one side of a result: its role and where it ran.
type ResultEndpoint struct {
	// Role is "server", "client", "initiator", "target" or "rank3".
	Role    string `json:"role"`
	Name    string `json:"name"`
	Node    string `json:"node,omitempty"`
	Device  string `json:"device,omitempty"`
	Address string `json:"address,omitempty"`
}

// Fingerprint keys: every backend records the kernel and the firmware and
// active MTU of an endpoint's NIC (nic.Fingerprint), preflight the UCX and
// NCCL it finds. compare warns when any of them differ between two runs,
// because a result then measures a different system; the automatic
// baseline only picks runs that agree.
const (
	FingerprintNICFirmware = "nic.firmware"
	FingerprintMTU         = "nic.mtu"
	FingerprintKernel      = "kernel"
	FingerprintNCCL        = "nccl.version"
	FingerprintUCX         = "ucx.version"
)

// Repetition is one run of a leg.
type Repetition struct {
	Index      int                `json:"index"`
	OK         bool               `json:"ok"`
	ErrorClass parsers.ErrorClass `json:"errorClass,omitempty"`
	Error      string             `json:"error,omitempty"`
	Samples    []parsers.Sample   `json:"samples"`
	Seconds    float64            `json:"seconds"`
}

// SizeStats summarises the headline metric of one size over repetitions.
type SizeStats struct {
	Bytes  int64          `json:"bytes"`
	Metric parsers.Metric `json:"metric"` // the result's Metric
	N      int            `json:"n"`
	Mean   float64        `json:"mean"`
	Stddev float64        `json:"stddev"`
	Min    float64        `json:"min"`
	Max    float64        `json:"max"`
}

// Summary counts results by verdict.
type Summary struct {
	Total   int `json:"total"`
	Pass    int `json:"pass"`
	Fail    int `json:"fail"`
	Error   int `json:"error"`
	Skipped int `json:"skipped"`
	Invalid int `json:"invalid,omitempty"`
}

// CountVerdicts counts results by verdict.
func CountVerdicts(rs []Result) Summary {
	s := Summary{Total: len(rs)}
	for _, r := range rs {
		switch r.Verdict {
		case VerdictPass:
			s.Pass++
		case VerdictFail:
			s.Fail++
		case VerdictError:
			s.Error++
		case VerdictSkipped:
			s.Skipped++
		case VerdictInvalid:
			s.Invalid++
		}
	}
	return s
}

// Affinity is one GPU of an endpoint and the NIC it was given, with their
// PCIe relation.
type Affinity struct {
	Endpoint string `json:"endpoint"`
	GPU      string `json:"gpu"`
	Device   string `json:"device"`
	Relation string `json:"relation"`
}
