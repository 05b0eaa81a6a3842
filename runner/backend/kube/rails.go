package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// attachments are the pod's interfaces on each named network, in the order
// named (rail 0 first): a network missing from the pod is an error.
func (b *Backend) attachments(pod *corev1.Pod, nets []string) ([]attachment, error) {
	out := make([]attachment, 0, len(nets))
	for _, n := range nets {
		att, err := b.dataAttachment(pod, n)
		if err != nil {
			return nil, err
		}
		out = append(out, att)
	}
	return out, nil
}

// resolveRails gives a pod with several secondary networks its rails:
// rail 0 is the data network as already resolved, each other one's RDMA
// device, port and GID are found as the data network's are (device-info,
// else its interface and address), with its line rate. A pod with one
// network (or none), or whose device the scenario names, keeps no rails.
func (b *Backend) resolveRails(ctx context.Context, ep *endpoint.Endpoint, pod *corev1.Pod) error {
	nets := placementOf(*ep).Networks
	if len(nets) < 2 || !ep.ResolveDevice {
		return nil
	}
	atts, err := b.attachments(pod, nets)
	if err != nil {
		return &StartupError{Pod: pod.Name, Reason: "NoSecondaryNetwork", Msg: err.Error()}
	}
	rails := []endpoint.Rail{b.railOf(ctx, *ep)}
	for _, att := range atts[1:] {
		r := *ep
		r.Device, r.Port, r.GIDIndex, r.DeviceFrom, r.NoDevice, r.DataDevice = "", 0, nil, "", "", ""
		r.Address, r.Network, r.Interface = att.IP, att.Network, att.Interface
		if err := b.disc.ResolveDevice(ctx, &r, att.hints()); err != nil {
			return err
		}
		rails = append(rails, b.railOf(ctx, r))
		if r.Device != "" {
			b.progressf("%s: rail %s (%s) RDMA device %s port %d%s (%s)", ep.Name, r.Interface, r.Network, r.Device, r.Port, gidText(r.GIDIndex), r.DeviceFrom)
		}
	}
	ep.Rails = rails
	return nil
}

// railOf is an endpoint resolved on one network, as a rail.
func (b *Backend) railOf(ctx context.Context, ep endpoint.Endpoint) endpoint.Rail {
	r := endpoint.Rail{Network: ep.Network, Interface: ep.Interface, Address: ep.Address, Device: ep.Device,
		Port: ep.Port, GIDIndex: ep.GIDIndex, DeviceFrom: ep.DeviceFrom, NoDevice: ep.NoDevice}
	if r.Device != "" {
		r.RateBps, _, _ = b.disc.LineRate(ctx, ep)
	}
	return r
}

// warnAffinity says where a GPU the endpoint uses is SYS apart from its
// NIC (across the CPU sockets): measured silently, such a pair moves
// about half the bandwidth.
func (b *Backend) warnAffinity(ep endpoint.Endpoint) {
	for _, a := range ep.Affinity {
		if a.Relation != "SYS" {
			continue
		}
		nearer := ""
		if a.Nearest != "" {
			nearer = fmt.Sprintf("; the host's %s is %s to it", a.Nearest, a.NearestRelation)
		}
		b.progressf("warning: %s: %s and %s are SYS apart (across the CPU sockets: expect about half the bandwidth)%s",
			ep.Name, a.GPU, a.Device, nearer)
	}
}
