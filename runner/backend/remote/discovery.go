package remote

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/backend"
)

// Discovery reads the RDMA NICs an endpoint sees through its command
// channel (sysfs read with a shell, no rdmabench needed there) and keeps one
// inventory per machine for the run. The ssh and kube backends embed it for
// device resolution, `lineRate: auto`, RDMA skips and the fingerprint.
type Discovery struct {
	// Exec runs a short command on the endpoint and returns its stdout.
	Exec func(ctx context.Context, ep backend.Endpoint, argv []string) ([]byte, error)
	// Key names the machine whose sysfs an endpoint sees: endpoints with
	// the same key share one inventory (ssh: the host; kube: the pod, as
	// each pod may be given its own virtual functions).
	Key func(ep backend.Endpoint) string
	// Prefix starts every error ("ssh", "kube").
	Prefix string

	mu   sync.Mutex
	invs map[string]*nic.Inventory
}

// Discover returns the NIC inventory of ep's machine, read once.
func (d *Discovery) Discover(ctx context.Context, ep backend.Endpoint) (*nic.Inventory, error) {
	key := d.Key(ep)
	d.mu.Lock()
	inv := d.invs[key]
	d.mu.Unlock()
	if inv != nil {
		return inv, nil
	}
	inv, err := nic.DiscoverRemote(ctx, func(ctx context.Context, argv []string) ([]byte, error) {
		return d.Exec(ctx, ep, argv)
	})
	if err != nil {
		return nil, fmt.Errorf("%s %s: discovering NICs: %w", d.Prefix, key, err)
	}
	d.mu.Lock()
	if d.invs == nil {
		d.invs = map[string]*nic.Inventory{}
	}
	d.invs[key] = inv
	d.mu.Unlock()
	return inv, nil
}

// ResolveDevice checks the endpoint's RDMA device and GID index against
// what its machine has, so a wrong name fails before any tool starts, with
// the devices that do exist. "auto" becomes the first ACTIVE device (or
// stays empty where there is none); an unset GID index becomes the port's
// RoCE v2 IPv4 GID.
func (d *Discovery) ResolveDevice(ctx context.Context, ep *backend.Endpoint) error {
	if ep.Device == "" {
		return nil
	}
	inv, err := d.Discover(ctx, *ep)
	if err != nil {
		return err
	}
	auto := ep.Device == "auto"
	dev, p, err := inv.Pick(ep.Device)
	if err != nil {
		if auto {
			ep.Device = ""
			return nil
		}
		return fmt.Errorf("%s %s: endpoint %s: %w", d.Prefix, d.Key(*ep), ep.Name, err)
	}
	ep.Device = dev.Name
	if ep.Interface == "" { // the RDMA port's netdev (NCCL_SOCKET_IFNAME); a pod's keeps its network's
		ep.Interface = p.Netdev
	}
	if ep.GIDIndex == nil {
		ep.GIDIndex = p.RoCEv2GIDIndex
		return nil
	}
	return d.checkGID(ep, p)
}

func (d *Discovery) checkGID(ep *backend.Endpoint, p *nic.Port) error {
	for _, g := range p.GIDs {
		if g.Index == *ep.GIDIndex {
			return nil
		}
	}
	var have []string
	for _, g := range p.GIDs {
		have = append(have, fmt.Sprintf("%d (%s %s)", g.Index, g.Type, g.GID))
	}
	hint := "remove gidIndex to use the RoCE v2 IPv4 GID"
	if p.RoCEv2GIDIndex != nil {
		hint = fmt.Sprintf("the RoCE v2 IPv4 GID is %d", *p.RoCEv2GIDIndex)
	}
	return fmt.Errorf("%s %s: endpoint %s: GID index %d of %s port %d is empty; populated: %s; %s",
		d.Prefix, d.Key(*ep), ep.Name, *ep.GIDIndex, ep.Device, p.Port, strings.Join(have, ", "), hint)
}

// LineRate is `lineRate: auto`: the rate of ep's device (or its machine's
// first ACTIVE port) with where it came from ("vm1 rxe0 port 1: 2.5
// Gb/sec (1X SDR)").
func (d *Discovery) LineRate(ctx context.Context, ep backend.Endpoint) (bps float64, detail string, ok bool) {
	inv, err := d.Discover(ctx, ep)
	if err != nil {
		return 0, err.Error(), false
	}
	dev, p, err := inv.Pick(ep.Device)
	if err != nil || p.RateBps <= 0 {
		return 0, "", false
	}
	return p.RateBps, fmt.Sprintf("%s %s port %d: %s", d.Key(ep), dev.Name, p.Port, p.Rate), true
}

// HasRDMA reports whether ep's machine has an RDMA device with an ACTIVE
// port (the runner skips RDMA tests where it has none).
func (d *Discovery) HasRDMA(ctx context.Context, ep backend.Endpoint) bool {
	inv, err := d.Discover(ctx, ep)
	if err != nil {
		return false
	}
	_, p, err := inv.Pick("auto")
	return err == nil && p != nil
}

// Fingerprint is what ep's machine says about the system measured: its
// kernel (uname -r, bounded) and the firmware and active MTU of ep's RDMA
// device where it has one.
func (d *Discovery) Fingerprint(ctx context.Context, ep backend.Endpoint) map[string]string {
	uctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var kernel string
	if out, err := d.Exec(uctx, ep, []string{"uname", "-r"}); err == nil {
		kernel = strings.TrimSpace(string(out))
	}
	inv, _ := d.Discover(ctx, ep)
	return nic.Fingerprint(kernel, inv, ep.Device)
}

// HasGPU reports whether ep sees an NVIDIA GPU device file (/dev/nvidiaN),
// as a pod given nvidia.com/gpu or a GPU host does.
func (d *Discovery) HasGPU(ctx context.Context, ep backend.Endpoint) bool {
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := d.Exec(gctx, ep, []string{"sh", "-c", "ls /dev/ | grep -c '^nvidia[0-9]' || true"})
	return err == nil && strings.TrimSpace(string(out)) != "0" && strings.TrimSpace(string(out)) != ""
}
