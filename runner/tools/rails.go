package tools

import "github.com/rdmabench/rdmabench/runner/endpoint"

// RailsPlaceholder stands for the rails of a multi-rail pod after its data
// rail, as ",dev:port" each (",mlx5_1:1,mlx5_2:1"; "" when none has an
// RDMA device): it follows the endpoint's own "${dev:…}:${port:…}" in
// NCCL_IB_HCA and UCX_NET_DEVICES, so that the tools get every rail.
func RailsPlaceholder(endpoint string) string { return "${rails:" + endpoint + "}" }

// multiRail: the endpoint is a pod with several secondary networks whose
// devices are found where it runs, so that its other rails are known only
// then.
func multiRail(ep endpoint.Endpoint) bool {
	return ep.Device == "" && ep.ResolveDevice && ep.Placement != nil && len(ep.Placement.Networks) > 1
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
	if l.Rail > 0 {
		return DevicePlaceholder(endpoint.RailName(ep.Name, l.Rail))
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
	return min(len(a.Placement.Networks), len(b.Placement.Networks))
}
