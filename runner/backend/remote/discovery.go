package remote

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// Discovery reads the RDMA NICs an endpoint sees through its command
// channel (sysfs read with a shell, no rdmabench needed there) and keeps one
// inventory per machine for the run. The ssh and kube backends embed it for
// device resolution, `lineRate: auto`, RDMA skips and the fingerprint.
type Discovery struct {
	// Exec runs a short command on the endpoint and returns its stdout.
	Exec func(ctx context.Context, ep endpoint.Endpoint, argv []string) ([]byte, error)
	// Key names the machine whose sysfs an endpoint sees: endpoints with
	// the same key share one inventory (ssh: the host; kube: the pod, as
	// each pod may be given its own virtual functions).
	Key func(ep endpoint.Endpoint) string
	// Prefix starts every error ("ssh", "kube").
	Prefix string

	mu   sync.Mutex
	invs map[string]*nic.Inventory
}

// Discover returns the NIC inventory of ep's machine, read once.
func (d *Discovery) Discover(ctx context.Context, ep endpoint.Endpoint) (*nic.Inventory, error) {
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

// DeviceHints are what the platform says of an endpoint's RDMA device:
// on Kubernetes, Multus network-status device-info (the CNI's
// rdma-device or pci-address) or the SR-IOV device plugin's
// PCIDEVICE_<resource> variable; From names which.
type DeviceHints struct {
	RDMADevice   string
	PCIAddresses []string
	From         string
}

// ResolveDevice sets the endpoint's RDMA device, port and GID index from
// what its machine has, before any tool starts. A device the scenario
// names is checked (a wrong name fails with the devices that exist), and
// the data interface's own device is kept beside it (DataDevice) when it
// differs. Otherwise (ResolveDevice, or "auto") the data interface's
// device is chosen (nic.DataPath: the hints, then the interface, then the
// data address's GID), with the RoCE v2 GID of the data interface; none
// found leaves Device empty and NoDevice saying why (RDMA tests are then
// skipped with that reason). An unset GID index becomes the data
// interface's RoCE v2 GID.
//
// The device chosen, its physical port is named too (NICPort), so that
// endpoints of one machine that send on one port are known.
func (d *Discovery) ResolveDevice(ctx context.Context, ep *endpoint.Endpoint, hints DeviceHints) error {
	if err := d.resolveDevice(ctx, ep, hints); err != nil || ep.Device == "" {
		return err
	}
	d.mu.Lock()
	inv := d.invs[d.Key(*ep)]
	d.mu.Unlock()
	ep.NICPort = inv.PortID(ep.Device, ep.Port)
	return nil
}

func (d *Discovery) resolveDevice(ctx context.Context, ep *endpoint.Endpoint, hints DeviceHints) error {
	named := ep.Device != "" && ep.Device != "auto"
	if !named && !ep.ResolveDevice && ep.Device != "auto" {
		return nil
	}
	inv, err := d.Discover(ctx, *ep)
	if err != nil {
		return err
	}
	req := nic.DataPathRequest{RDMADevice: hints.RDMADevice, PCIAddresses: hints.PCIAddresses, From: hints.From,
		Interface: ep.Interface, Address: ep.Address}
	if net.ParseIP(req.Address) == nil {
		req.Address = "" // a host name: no GID to look for
	}
	if !named {
		dp, err := inv.DataPath(req)
		if err != nil && req.Interface == "" && req.Address == "" && hints.From == "" {
			// Nothing tells the data interface (an ssh host named by
			// name): the machine's first ACTIVE device, as before.
			return d.named(ep, inv, "auto", "the first ACTIVE device (the data address is not an IP address)")
		}
		if err != nil {
			ep.Device, ep.NoDevice = "", err.Error()
			return nil
		}
		ep.Device, ep.Port, ep.DeviceFrom = dp.Device, dp.Port, dp.From
		if ep.Interface == "" {
			ep.Interface = dp.Netdev
		}
		if ep.GIDIndex == nil {
			ep.GIDIndex = dp.GIDIndex
			return nil
		}
		_, p, _ := inv.Pick(dp.Device)
		return d.checkGID(ep, p)
	}
	if err := d.named(ep, inv, ep.Device, "scenario"); err != nil {
		return err
	}
	if dp, err := inv.DataPath(req); err == nil && dp.Device != ep.Device {
		ep.DataDevice = dp.Device
	}
	return nil
}

// named checks a device by name ("auto": the first ACTIVE one) and fills
// the endpoint from it.
func (d *Discovery) named(ep *endpoint.Endpoint, inv *nic.Inventory, name, from string) error {
	dev, p, err := inv.Pick(name)
	if err != nil {
		if name == "auto" {
			ep.Device, ep.NoDevice = "", err.Error()
			return nil
		}
		return fmt.Errorf("%s %s: endpoint %s: %w", d.Prefix, d.Key(*ep), ep.Name, err)
	}
	ep.Device, ep.Port, ep.DeviceFrom = dev.Name, p.Port, from
	if ep.Interface == "" { // the RDMA port's netdev (NCCL_SOCKET_IFNAME); a pod's keeps its network's
		ep.Interface = p.Netdev
	}
	if ep.GIDIndex == nil {
		addr := ep.Address
		if net.ParseIP(addr) == nil {
			addr = ""
		}
		ep.GIDIndex = nic.DataGID(p, "", addr)
		if ep.GIDIndex == nil {
			ep.GIDIndex = p.RoCEv2GIDIndex
		}
		return nil
	}
	return d.checkGID(ep, p)
}

func (d *Discovery) checkGID(ep *endpoint.Endpoint, p *nic.Port) error {
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

// LineRate is `lineRate: auto`: the rate of ep's device and port (or its
// machine's first ACTIVE port) with where it came from ("vm1 rxe0 port 1:
// 2.5 Gb/sec (1X SDR)").
func (d *Discovery) LineRate(ctx context.Context, ep endpoint.Endpoint) (bps float64, detail string, ok bool) {
	if ep.NoDevice != "" {
		return 0, "", false
	}
	inv, err := d.Discover(ctx, ep)
	if err != nil {
		return 0, err.Error(), false
	}
	dev, p, err := inv.Pick(ep.Device)
	if err != nil {
		return 0, "", false
	}
	if q := portOf(dev, ep.Port); q != nil {
		p = q
	}
	if p.RateBps <= 0 {
		return 0, "", false
	}
	return p.RateBps, fmt.Sprintf("%s %s port %d: %s", d.Key(ep), dev.Name, p.Port, p.Rate), true
}

func portOf(dev *nic.Device, n int) *nic.Port {
	for i := range dev.Ports {
		if dev.Ports[i].Port == n {
			return &dev.Ports[i]
		}
	}
	return nil
}

// HasRDMA reports whether ep has an RDMA device with an ACTIVE port: its
// own (once resolved), else any of its machine's (the runner skips RDMA
// tests where it has none).
func (d *Discovery) HasRDMA(ctx context.Context, ep endpoint.Endpoint) bool {
	if ep.NoDevice != "" {
		return false
	}
	inv, err := d.Discover(ctx, ep)
	if err != nil {
		return false
	}
	name := "auto"
	if ep.Device != "" {
		name = ep.Device
	}
	_, p, err := inv.Pick(name)
	return err == nil && p != nil && p.State == "ACTIVE"
}

// Fingerprint is what ep's machine says about the system measured: its
// kernel (uname -r, bounded) and the firmware and active MTU of ep's RDMA
// device where it has one.
func (d *Discovery) Fingerprint(ctx context.Context, ep endpoint.Endpoint) map[string]string {
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
func (d *Discovery) HasGPU(ctx context.Context, ep endpoint.Endpoint) bool {
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := d.Exec(gctx, ep, []string{"sh", "-c", "ls /dev/ | grep -c '^nvidia[0-9]' || true"})
	return err == nil && strings.TrimSpace(string(out)) != "0" && strings.TrimSpace(string(out)) != ""
}
