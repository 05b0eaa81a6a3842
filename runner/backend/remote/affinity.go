package remote

import (
	"context"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// Affinity is the PCIe relation of each GPU the endpoint uses to the NIC
// it uses, from its machine's `nvidia-smi topo -m`: its device, or on a
// multi-rail pod the nearest of its rails (nic.Inventory.Affinity); nil
// without GPUs, a device or a matrix that lists it.
func (d *Discovery) Affinity(ctx context.Context, ep endpoint.Endpoint) []endpoint.GPUNIC {
	if ep.GPUs <= 0 || ep.Device == "" {
		return nil
	}
	inv, err := d.Discover(ctx, ep)
	if err != nil {
		return nil
	}
	devices := []string{ep.Device}
	for i, r := range ep.Rails {
		if i > 0 && r.Device != "" {
			devices = append(devices, r.Device)
		}
	}
	var out []endpoint.GPUNIC
	for _, p := range inv.AffinityOf(ep.OwnGPUs(), devices) {
		out = append(out, endpoint.GPUNIC(p))
	}
	return out
}
