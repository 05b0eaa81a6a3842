package tools

import (
	"strconv"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// RailsPlaceholder stands for the rails of a multi-rail pod after its data
// rail, as ",dev:port" each (",mlx5_1:1,mlx5_2:1"; "" when none has an
// RDMA device): it follows the endpoint's own "${dev:…}:${port:…}" in
// NCCL_IB_HCA and UCX_NET_DEVICES, so that the tools get every rail.
func RailsPlaceholder(endpoint string) string { return "${rails:" + endpoint + "}" }

// NICPlaceholder stands for the RDMA device and port ("mlx5_3:1") nearest
// to GPU gpu of a multi-rail endpoint, as its machine's nvidia-smi topo -m
// says (endpoint.Affinity), known once the endpoint runs; where the matrix
// does not list that GPU, every rail, as for a process without a GPU.
// UCX_NET_DEVICES of a process that drives one GPU, so that its bytes
// leave through its own NIC, not the pod's first rail.
func NICPlaceholder(endpoint string, gpu int) string {
	return "${nic:" + endpoint + "@" + strconv.Itoa(gpu) + "}"
}

// ucxDevices is UCX_NET_DEVICES of a process on ep that drives GPU gpu
// (-1: none, or host memory): on a multi-rail pod's data rail its GPU's
// nearest NIC, else the endpoint's device and rails (hca).
func (l *Leg) ucxDevices(ep endpoint.Endpoint, gpu int) string {
	if gpu >= 0 && multiRail(ep) && l.railOf(ep.Name) == 0 && device(ep) != "" {
		return NICPlaceholder(ep.Name, gpu)
	}
	return l.hca(ep)
}

// multiRail: the endpoint is a pod with several secondary networks (or an
// ssh host with rails) whose devices are found where it runs, so that its
// other rails are known only then.
func multiRail(ep endpoint.Endpoint) bool {
	return ep.Device == "" && ep.ResolveDevice && railCount(ep) > 1
}

// railCount is how many rails the planner knows an endpoint has: a pod's
// networks, an ssh host's addresses (its planned Rails); 1 otherwise.
func railCount(ep endpoint.Endpoint) int {
	if ep.Placement != nil && len(ep.Placement.Networks) > 1 {
		return len(ep.Placement.Networks)
	}
	return max(len(ep.Rails), 1)
}

// railOf is the rail a leg uses on the named endpoint: the server's
// PeerRail on a cross-rail leg, else the leg's Rail.
func (l *Leg) railOf(name string) int {
	if l.CrossRail && name == l.Server.Name && name != l.Client.Name {
		return l.PeerRail
	}
	return l.Rail
}

// hca is the endpoint's RDMA device and port as NCCL and UCX name them
// ("mlx5_0:1"), followed by its other rails' on a multi-rail pod; "" when
// the endpoint has no known device.
func (l *Leg) hca(ep endpoint.Endpoint) string {
	dev := device(ep)
	if dev == "" {
		return ""
	}
	h := dev + ":" + l.port(ep)
	if multiRail(ep) {
		h += RailsPlaceholder(ep.Name)
	}
	return h
}

// device is the endpoint's RDMA device on the leg's rail (see the
// function device).
func (l *Leg) device(ep endpoint.Endpoint) string {
	if rail := l.railOf(ep.Name); rail > 0 {
		return DevicePlaceholder(endpoint.RailName(ep.Name, rail))
	}
	return device(ep)
}

// PerRail says whether a tool measures one rail per leg (perftest: rail i
// to rail i), rather than being given every rail at once.
func PerRail(name string) bool { return runners[name].perRail }

// Rails is how many rails a pair of endpoints share, as the planner knows
// them: one per secondary network of multi-rail pods; 1 otherwise.
func Rails(a, b endpoint.Endpoint) int {
	if !multiRail(a) || !multiRail(b) {
		return 1
	}
	return min(railCount(a), railCount(b))
}

// RailsOf is how many rails the planner knows an endpoint has (1 for one
// that is not multi-rail): a cross-rail test pairs each of the client's
// with each of the server's.
func RailsOf(ep endpoint.Endpoint) int {
	if !multiRail(ep) {
		return 1
	}
	return railCount(ep)
}

// CrossRails says whether a test connects every rail to every remote rail
// (rping's args.crossRails), one leg per rail pair.
func CrossRails(t *scenarios.Test) bool { return t.Args.CrossRails }
