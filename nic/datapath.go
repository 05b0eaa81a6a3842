package nic

import (
	"fmt"
	"slices"
	"strings"
)

// DataPathRequest says what is known of an endpoint's data interface, for
// choosing the RDMA device, port and GID its tests must use. A pod in
// shared RDMA mode sees every device of its node; only these facts tell
// which one is its own.
type DataPathRequest struct {
	// RDMADevice is the device the network's CNI reported (Multus
	// network-status device-info "pci.rdma-device"); PCIAddresses the
	// PCI functions given to the pod (device-info "pci-address", the SR-IOV
	// device plugin's PCIDEVICE_<resource>), with From saying where they
	// were read.
	RDMADevice   string
	PCIAddresses []string
	From         string
	// Interface is the data interface's netdev ("net1", "eth0"); Address
	// its IPv4 address (the endpoint's data address).
	Interface string
	Address   string
}

// DataPath is the device, port and GID index an endpoint's tests use, and
// how they were found.
type DataPath struct {
	Device string
	Port   int
	// GIDIndex is the RoCE v2 GID of the data interface (its address's
	// IPv4-mapped GID first); nil on InfiniBand (the port's GID 0 serves).
	GIDIndex *int
	// Netdev is the port's netdev (the data interface, when known).
	Netdev string
	// From says how the device was chosen, for the report.
	From string
	// RateBps is the port's line rate (0 when unknown).
	RateBps float64
	Rate    string
}

// DataPath chooses the data interface's RDMA device: the device the CNI
// named, else the PCI function given to the pod, else the device whose
// port's netdev is the data interface (as /sys/class/net/IF/device/infiniband
// says), else the device holding a GID of the data address. Then its port
// (the data interface's, else the first ACTIVE) and, on RoCE, the RoCE v2
// GID whose netdev is the data interface: the data address's IPv4-mapped
// GID first, then any IPv4-mapped one, then any. The error says what was
// looked at.
func (inv *Inventory) DataPath(req DataPathRequest) (DataPath, error) {
	d, from, err := inv.dataDevice(req)
	if err != nil {
		return DataPath{}, err
	}
	p := dataPort(d, req.Interface, req.Address)
	if p == nil {
		return DataPath{}, fmt.Errorf("RDMA device %s (%s) has no port", d.Name, from)
	}
	dp := DataPath{Device: d.Name, Port: p.Port, Netdev: p.Netdev, From: from, RateBps: p.RateBps, Rate: p.Rate}
	if p.LinkLayer != "Ethernet" {
		return dp, nil // InfiniBand (the port's GID 0 serves), EFA (SRD: no RoCE GID)
	}
	iface := req.Interface
	if iface == "" {
		iface = gidNetdev(p, req.Address)
	}
	g := DataGID(p, iface, req.Address)
	if g == nil {
		return dp, fmt.Errorf("RDMA device %s port %d (%s) has no RoCE v2 GID on %s (GIDs: %s); is an IP address configured on it?",
			d.Name, p.Port, from, orAny(iface), gidSummary(p))
	}
	dp.GIDIndex = g
	if iface != "" {
		dp.Netdev = iface
	}
	return dp, nil
}

func (inv *Inventory) dataDevice(req DataPathRequest) (*Device, string, error) {
	if req.RDMADevice != "" {
		for i := range inv.Devices {
			if inv.Devices[i].Name == req.RDMADevice {
				return &inv.Devices[i], req.From + ": rdma-device " + req.RDMADevice, nil
			}
		}
		return nil, "", fmt.Errorf("%s names RDMA device %s, which is not under /sys/class/infiniband here (found %s)", req.From, req.RDMADevice, inv.names())
	}
	if len(req.PCIAddresses) > 0 {
		var found []*Device
		for i := range inv.Devices {
			if slices.Contains(req.PCIAddresses, inv.Devices[i].PCIAddress) {
				found = append(found, &inv.Devices[i])
			}
		}
		// Several functions (a pod given two VFs): the data interface's.
		for _, d := range found {
			if hasNetdev(d, req.Interface) {
				return d, req.From + ": " + d.PCIAddress, nil
			}
		}
		if len(found) > 0 {
			return found[0], req.From + ": " + found[0].PCIAddress, nil
		}
		return nil, "", fmt.Errorf("%s gives PCI function(s) %s, which carry no RDMA device here (found %s)", req.From, strings.Join(req.PCIAddresses, ", "), inv.names())
	}
	if req.Interface != "" {
		for i := range inv.Devices {
			if hasNetdev(&inv.Devices[i], req.Interface) {
				return &inv.Devices[i], "netdev " + req.Interface, nil
			}
		}
	}
	if req.Address != "" {
		for i := range inv.Devices {
			for _, p := range inv.Devices[i].Ports {
				for _, g := range p.GIDs {
					if g.IPv4 == req.Address {
						return &inv.Devices[i], "GID of " + req.Address, nil
					}
				}
			}
		}
	}
	return nil, "", fmt.Errorf("no RDMA device serves the data interface %s (%s): no network-status device-info, no PCIDEVICE_ variable, no device on that netdev nor with a GID of that address; this endpoint has %s",
		orAny(req.Interface), orAny(req.Address), inv.names())
}

// hasNetdev: a port of d is iface (ibdev2netdev), or carries a GID of it.
func hasNetdev(d *Device, iface string) bool {
	if iface == "" {
		return false
	}
	for _, p := range d.Ports {
		if p.Netdev == iface {
			return true
		}
		for _, g := range p.GIDs {
			if g.Netdev == iface {
				return true
			}
		}
	}
	return false
}

// dataPort is d's port on iface or address, else its first ACTIVE one, else its first.
func dataPort(d *Device, iface, addr string) *Port {
	for i := range d.Ports {
		p := &d.Ports[i]
		if iface != "" && p.Netdev == iface {
			return p
		}
		for _, g := range p.GIDs {
			if iface != "" && g.Netdev == iface || addr != "" && g.IPv4 == addr {
				return p
			}
		}
	}
	if p := activePort(d); p != nil {
		return p
	}
	if len(d.Ports) > 0 {
		return &d.Ports[0]
	}
	return nil
}

// gidNetdev is the netdev of the port's GID holding addr ("" if none).
func gidNetdev(p *Port, addr string) string {
	for _, g := range p.GIDs {
		if addr != "" && g.IPv4 == addr {
			return g.Netdev
		}
	}
	return ""
}

// DataGID is the GID index a RoCE test on port p must use for the data
// interface iface (any netdev when ""): among its RoCE v2 GIDs, the data
// address's IPv4-mapped one, else an IPv4-mapped one, else any; nil when
// it has none.
func DataGID(p *Port, iface, addr string) *int {
	var mapped, other *int
	for _, g := range p.GIDs {
		if !strings.EqualFold(g.Type, "RoCE v2") || iface != "" && g.Netdev != iface {
			continue
		}
		i := g.Index
		switch {
		case addr != "" && g.IPv4 == addr:
			return &i
		case g.IPv4 != "" && mapped == nil:
			mapped = &i
		case other == nil:
			other = &i
		}
	}
	if mapped != nil {
		return mapped
	}
	return other
}

func gidSummary(p *Port) string {
	var out []string
	for _, g := range p.GIDs {
		out = append(out, fmt.Sprintf("%d %s %s on %s", g.Index, g.Type, orAny(g.IPv4), orAny(g.Netdev)))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func orAny(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
