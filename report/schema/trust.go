package schema

// Preflight statuses.
const (
	PreflightPass = "pass"
	PreflightWarn = "warn" // worth fixing; tests still run
	PreflightFail = "fail" // the tests it dooms are skipped
	// PreflightSkip is a failed check of a tool's build whose tests
	// another failing check (no RDMA device, no GPU) already skips: the
	// evidence is kept, but the reason is said once, by that check.
	PreflightSkip = "skip"
)

// What a failing preflight check dooms, on its endpoint.
const (
	DoomsRDMA      = "rdma"      // tests that need RDMA
	DoomsGPU       = "gpu"       // tests that need GPU memory
	DoomsGPUDirect = "gpudirect" // tests that move GPU memory over RDMA
	DoomsNCCLNet   = "nccl-net"  // NCCL between nodes over EFA (needs aws-ofi-nccl)
	DoomsTool      = "tool"      // tests that need this check of their tool's build (the check's id names it)
)

// PreflightEndpoint is every check made on one endpoint.
type PreflightEndpoint struct {
	Endpoint string `json:"endpoint"`
	Host     string `json:"host,omitempty"`
	Node     string `json:"node,omitempty"`
	Device   string `json:"device,omitempty"`
	// Error is set when the facts could not be read at all.
	Error  string           `json:"error,omitempty"`
	Checks []PreflightCheck `json:"checks"`
	// Versions are the transfer libraries found on the endpoint, by
	// fingerprint key (ucx.version, nccl.version); a pod's other
	// containers' with the container in brackets ("ucx.version (nixl)").
	Versions map[string]string `json:"versions,omitempty"`
}

// PreflightCheck is one named check: a stable id (rdma-device,
// port-active, memlock …), its status, the values read and the fix.
type PreflightCheck struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Evidence string `json:"evidence"`
	Fix      string `json:"fix,omitempty"`
	// Dooms is what a failure of this check skips on its endpoint
	// (rdma, gpu, gpudirect; tool: the tests whose tool needs this check,
	// by its id); empty for checks that skip nothing.
	Dooms string `json:"dooms,omitempty"`
	// Container is the pod's container the check read ("": the tools
	// container, or no pod): in a pod of several (cluster.images) each
	// is checked where its tools run.
	Container string `json:"container,omitempty"`
}

// PathProof is what the RDMA port counters say about one leg: the bytes
// (or packets, where the driver counts no bytes) that crossed each
// endpoint's device, against what the tool says it moved.
type PathProof struct {
	// Verified: every endpoint's device carried the tool's traffic, within
	// the tolerance (headers, acknowledgements, retries, warm-up).
	Verified bool `json:"verified"`
	// Invalid: some endpoint's device carried (almost) none of it.
	Invalid bool `json:"invalid,omitempty"`
	// ToolBytes is the payload the tool reports (size × iterations);
	// ToolPackets the packets that payload needs at the path MTU.
	ToolBytes   int64 `json:"toolBytes,omitempty"`
	ToolPackets int64 `json:"toolPackets,omitempty"`
	// Detail says why, with the figures.
	Detail    string         `json:"detail"`
	Endpoints []PathCounters `json:"endpoints"`
	// Health is what the congestion and loss counters say over the leg
	// (HealthClean, HealthCongested, HealthLossy, HealthCongestedLossy);
	// empty when the devices have none. It never changes the verdict: it
	// says why a figure may be low. HealthDetail names the counters that
	// moved and by how much.
	Health       string `json:"health,omitempty"`
	HealthDetail string `json:"healthDetail,omitempty"`
}

// The values of PathProof.Health.
const (
	HealthClean          = "clean"
	HealthCongested      = "congested"
	HealthLossy          = "lossy"
	HealthCongestedLossy = "congested, lossy"
)

// PathCounters is one endpoint's device counter deltas over a leg.
type PathCounters struct {
	Endpoint string `json:"endpoint"`
	Device   string `json:"device"`
	Port     int    `json:"port"`
	// TxBytes and RxBytes are bytes (IB port_xmit_data/port_rcv_data ×
	// 4); nil when the driver does not count bytes (rxe).
	TxBytes *int64 `json:"txBytes,omitempty"`
	RxBytes *int64 `json:"rxBytes,omitempty"`
	// TxPackets and RxPackets are packets (port_xmit_packets, or rxe's
	// hw_counters sent_pkts/rcvd_pkts); nil when unknown.
	TxPackets *int64 `json:"txPackets,omitempty"`
	RxPackets *int64 `json:"rxPackets,omitempty"`
	// Health is the delta of each congestion and loss counter read, by
	// where it was read: hw_counters/NAME (sysfs) or ethtool/NAME (ethtool -S
	// of the device's network interface).
	Health map[string]int64 `json:"health,omitempty"`
	// Congested and Lossy name the health counters that moved, by kind
	// (CNPs, ECN marks, PFC pauses; drops, sequence errors, retries).
	Congested []string `json:"congested,omitempty"`
	Lossy     []string `json:"lossy,omitempty"`
	// Error says why the counters could not be read.
	Error string `json:"error,omitempty"`
}

// PreflightFailed says whether any check failed (or an endpoint's facts
// could not be read).
func PreflightFailed(eps []PreflightEndpoint) bool {
	for _, ep := range eps {
		if ep.Error != "" {
			return true
		}
		for _, c := range ep.Checks {
			if c.Status == PreflightFail {
				return true
			}
		}
	}
	return false
}
