package tools

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// Roles of a command.
const (
	RoleServer    = "server"
	RoleClient    = "client"
	RoleInitiator = "initiator"
	RoleTarget    = "target"
	RoleRank      = "rank"
)

// Readiness signals of a command (Command.Ready): how the runner knows a
// side is ready for the next command of its leg to start.
const (
	// ReadyListen: the side's port is in its endpoint's TCP listen table.
	ReadyListen = "listen"
	// ReadyLine prefixes "line:TEXT": a line of the side's output holds TEXT.
	ReadyLine = "line:"
	// ReadyEtcd prefixes "etcd:PREFIX": a key under PREFIX exists in the
	// run's etcd.
	ReadyEtcd = "etcd:"
	// ReadyRetry: readiness cannot be seen (rping's RDMA-CM port, not in
	// the TCP listen table); the next command is retried while it fails
	// fast, within the leg's bound.
	ReadyRetry = "retry"
	// ReadyNixlEtcdRank0 is the line nixlbench's ETCD runtime prints once
	// the process registered as rank 0 (and so is the initiator), whatever
	// the backend. (The worker's "rank 0, type initiator" line is not
	// printed by every backend: UCCL's worker never prints it.)
	ReadyNixlEtcdRank0 = ReadyLine + "ETCD Runtime: Registered as rank 0"
)

// Placeholders builders leave in command lines where the value is known
// only at run time; the runner substitutes them before starting a process
// (`rdmabench plan` shows them as they are).
const (
	// PlaceholderEtcd is the client URL of the run's etcd (nixlbench).
	PlaceholderEtcd = "${etcd}"
	// PlaceholderRun is the run id.
	PlaceholderRun = "${run}"
	// PlaceholderOut is a per-leg scratch folder on the endpoint (JSON
	// output files).
	PlaceholderOut = "${out}"
)

// AddrPlaceholder is the placeholder of an endpoint's data-plane address:
// a pod's secondary IP is known only once it runs.
func AddrPlaceholder(endpoint string) string { return "${addr:" + endpoint + "}" }

// DevicePlaceholder stands for an endpoint's RDMA device where it is
// chosen only once the endpoint runs (endpoint.Endpoint.ResolveDevice: a
// pod's own device, from its data interface); PortPlaceholder and
// GIDPlaceholder for its port and GID index. A value holding one that
// stays unknown (no GID on InfiniBand) is left out, with its flag (-x) or
// variable.
func DevicePlaceholder(endpoint string) string { return "${dev:" + endpoint + "}" }

// PortPlaceholder stands for an endpoint's RDMA port (see DevicePlaceholder).
func PortPlaceholder(endpoint string) string { return "${port:" + endpoint + "}" }

// GIDPlaceholder stands for an endpoint's GID index (see DevicePlaceholder).
func GIDPlaceholder(endpoint string) string { return "${gid:" + endpoint + "}" }

// GIDsPlaceholder is the GID index the endpoints share ("", left out,
// when they differ): NCCL_IB_GID_INDEX is one value for every rank.
func GIDsPlaceholder(endpoints []string) string {
	return "${gids:" + strings.Join(endpoints, ",") + "}"
}

// Leg is what a builder needs to know about one execution of a tool.
type Leg struct {
	Test *scenarios.Test
	// Client is the client / initiator (the test's from side), Server the
	// server / target (the to side). Multi-rank tools use Ranks instead.
	Client, Server endpoint.Endpoint
	Ranks          []endpoint.Endpoint
	// Size is this leg's message size in bytes; 0 means the tool's default
	// (or a sweep, for perftest with args.sweep).
	Size int64
	// Batch is the descriptors per transfer of one request's KV (nixlbench
	// args.perRequest), with Size the bytes of each; 0 otherwise.
	Batch int
	// Regions are the KV regions (layers × K/V, from each remote rank) the
	// Batch descriptors spread over: Batch/Regions blocks of each.
	Regions int
	// Backend is this leg's NIXL backend ("" = args.backend or UCX).
	Backend string
	// Port is the rendezvous port chosen by the planner (0 = tool default).
	Port int
	// Rail is the rail of a multi-rail pod this leg measures (perRail
	// tools): 0 the data network, i the pod's i-th other network, whose
	// device, port, GID and address are placeholders of its RailName.
	Rail int
	// CrossRail: the leg goes from the client's rail Rail to the server's
	// rail PeerRail (rping's crossRails: every rail to every remote rail),
	// rather than rail i to rail i.
	CrossRail bool
	PeerRail  int
	// Group names this leg uniquely within the run, for nixlbench's
	// --benchmark_group (the planner passes "<sanitized job id>-<leg>";
	// NixlGroup is the whole group name).
	Group string
	// EnvFor returns the environment a command on an endpoint will get
	// (nccl's mpirun forwards it to every rank with -x). May be nil.
	EnvFor func(endpoint string) map[string]string
	// Strings, when set, shares the strings that recur across the legs of
	// a plan (numbers, address placeholders): a 512-endpoint all-to-all
	// has half a million commands. May be nil.
	Strings *Strings
}

// Strings interns the small strings command lines repeat. Not safe for
// concurrent use; one per Compile.
type Strings struct {
	nums  map[int64]string
	addrs map[string]string
}

// NewStrings returns an empty interner.
func NewStrings() *Strings {
	return &Strings{nums: map[int64]string{}, addrs: map[string]string{}}
}

func (l *Leg) i64toa(n int64) string {
	if l.Strings == nil {
		return strconv.FormatInt(n, 10)
	}
	s, ok := l.Strings.nums[n]
	if !ok {
		s = strconv.FormatInt(n, 10)
		l.Strings.nums[n] = s
	}
	return s
}

func (l *Leg) itoa(n int) string { return l.i64toa(int64(n)) }

// addr is the placeholder of an endpoint's data address (on the leg's rail).
func (l *Leg) addr(name string) string {
	if rail := l.railOf(name); rail > 0 {
		return AddrPlaceholder(endpoint.RailName(name, rail))
	}
	return l.dataAddr(name)
}

func (l *Leg) dataAddr(endpoint string) string {
	if l.Strings == nil {
		return AddrPlaceholder(endpoint)
	}
	s, ok := l.Strings.addrs[endpoint]
	if !ok {
		s = AddrPlaceholder(endpoint)
		l.Strings.addrs[endpoint] = s
	}
	return s
}

// Command is one process of a leg, in start order. Env holds only what the
// tool itself needs (UCX_TLS …); the planner merges the endpoint's and the
// test's environment underneath it.
type Command struct {
	Endpoint string
	Role     string
	Argv     []string
	Env      map[string]string
	Port     int
	Ready    string
	Parse    bool
	// SSH, on an MPI launcher, asks for sshd on the other ranks first.
	SSH *SSHLaunch
}

// Build returns the commands of one leg, servers (or the first rank) first.
func Build(spec Spec, leg Leg) ([]Command, error) { return AppendCommands(nil, spec, leg) }

// AppendCommands is Build appending to dst, so that a planner can reuse
// one scratch slice for every leg.
func AppendCommands(dst []Command, spec Spec, leg Leg) ([]Command, error) {
	if leg.Test == nil {
		return dst, fmt.Errorf("tools: leg without a test")
	}
	if spec.build == nil {
		return dst, fmt.Errorf("tools: no command builder for tool %q", spec.Name)
	}
	return spec.build(dst, &spec, &leg)
}

// device is the RDMA device to name on a command line: the endpoint's, or
// its placeholder when it is chosen at run time; "" (and "auto") leave the
// choice to the tool (its first device), where nothing can say better.
func device(ep endpoint.Endpoint) string {
	switch {
	case ep.Device == "auto":
		return ""
	case ep.Device == "" && ep.ResolveDevice:
		return DevicePlaceholder(ep.Name)
	}
	return ep.Device
}

// port is the endpoint's RDMA port (1 unless it says, or its placeholder).
func (l *Leg) port(ep endpoint.Endpoint) string {
	switch rail := l.railOf(ep.Name); {
	case rail > 0:
		return PortPlaceholder(endpoint.RailName(ep.Name, rail))
	case ep.Port > 0:
		return l.itoa(ep.Port)
	case ep.Device == "" && ep.ResolveDevice:
		return PortPlaceholder(ep.Name)
	}
	return "1"
}

// gid is the endpoint's GID index ("" leaves it to the tool), or its
// placeholder.
func (l *Leg) gid(ep endpoint.Endpoint) string {
	switch rail := l.railOf(ep.Name); {
	case rail > 0:
		return GIDPlaceholder(endpoint.RailName(ep.Name, rail))
	case ep.GIDIndex != nil:
		return l.itoa(*ep.GIDIndex)
	case ep.Device == "" && ep.ResolveDevice:
		return GIDPlaceholder(ep.Name)
	}
	return ""
}

func portOr(p, def int) int {
	if p > 0 {
		return p
	}
	return def
}

// ucxEnv is the UCX transport selection of one side: UCX_TLS from the
// test's transports, UCX_NET_DEVICES from the endpoint's RDMA device (unless
// the transports are TCP-only, where an RDMA device name would hide the
// TCP devices).
func ucxEnv(l *Leg, a *scenarios.Args, ep endpoint.Endpoint) map[string]string {
	return ucxEnvOf(l, a, ep, -1)
}

// ucxEnvOf is ucxEnv for a process that drives GPU gpu (-1: none): on a
// multi-rail pod UCX_NET_DEVICES is then that GPU's nearest NIC.
func ucxEnvOf(l *Leg, a *scenarios.Args, ep endpoint.Endpoint, gpu int) map[string]string {
	env := map[string]string{}
	if a.Transports != "" {
		env["UCX_TLS"] = a.Transports
	}
	if h := l.ucxDevices(ep, gpu); h != "" && !tool.TransportsAreTCP(a.Transports) {
		env["UCX_NET_DEVICES"] = h
	}
	if len(env) == 0 {
		return nil
	}
	return env
}

// durationSecs is a scenario duration in whole seconds, rounded up; 0 when unset.
func durationSecs(d scenarios.Duration) int {
	v := d.Value
	if v == 0 && d.Raw != "" {
		_ = d.Parse()
		v = d.Value
	}
	if v <= 0 {
		return 0
	}
	s := int(v.Seconds())
	if float64(s) < v.Seconds() {
		s++
	}
	return s
}

// SizeBytes is a scenario size in bytes (parsing Raw when the loader has not).
func SizeBytes(s scenarios.Size) int64 {
	if s.Bytes == 0 && s.Raw != "" {
		_ = s.Parse()
	}
	return s.Bytes
}
