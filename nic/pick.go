package nic

import (
	"fmt"
	"strings"
)

// Pick returns the device and port a test should use: the named device
// ("" or "auto": the first device with an ACTIVE port) and its first ACTIVE
// port (or its first port when none is active and a name was given). The
// error names what was found, so a wrong name in a scenario is easy to fix.
func (inv *Inventory) Pick(device string) (*Device, *Port, error) {
	if len(inv.Devices) == 0 {
		want := ""
		if device != "" && device != "auto" {
			want = fmt.Sprintf("RDMA device %q not found: ", device)
		}
		return nil, nil, fmt.Errorf(want+"no RDMA device under %s/sys/class/infiniband (is the driver loaded? `rdma link` and `ibv_devices` list them)", strings.TrimSuffix(inv.Root, "/"))
	}
	for i := range inv.Devices {
		d := &inv.Devices[i]
		if device != "" && device != "auto" && d.Name != device {
			continue
		}
		if p := activePort(d); p != nil {
			return d, p, nil
		}
		if device != "" && device != "auto" && len(d.Ports) > 0 {
			return d, &d.Ports[0], nil
		}
	}
	if device == "" || device == "auto" {
		return nil, nil, fmt.Errorf("no RDMA device with an ACTIVE port (found %s)", inv.names())
	}
	return nil, nil, fmt.Errorf("RDMA device %q not found; this host has %s (`rdmabench discover` lists them)", device, inv.names())
}

func activePort(d *Device) *Port {
	for i := range d.Ports {
		if d.Ports[i].State == "ACTIVE" {
			return &d.Ports[i]
		}
	}
	return nil
}

func (inv *Inventory) names() string {
	var n []string
	for _, d := range inv.Devices {
		for _, p := range d.Ports {
			n = append(n, fmt.Sprintf("%s port %d %s", d.Name, p.Port, p.State))
		}
	}
	if len(n) == 0 {
		return "no devices"
	}
	return strings.Join(n, ", ")
}

// LineRate is the port rate of the picked device in bits/s: what
// `lineRate: auto` resolves to.
func (inv *Inventory) LineRate(device string) (float64, error) {
	_, p, err := inv.Pick(device)
	if err != nil {
		return 0, err
	}
	if p.RateBps <= 0 {
		return 0, fmt.Errorf("port rate of %q is unknown (sysfs rate %q); set lineRate in the scenario", device, p.Rate)
	}
	return p.RateBps, nil
}

// PortID names the physical port a device's port sends on, so that two
// endpoints of one machine on one port are told apart from two on ports
// of their own: an SR-IOV VF's physical function ("PCI 0000:3b:00.0 port
// 1", as the PF itself: the PF and its VFs share its line rate), else the
// device's own PCI function, else (a software device) its name. "" for a nil inventory or
// a device it does not have.
func (inv *Inventory) PortID(device string, port int) string {
	if inv == nil {
		return ""
	}
	port = max(port, 1)
	for i := range inv.Devices {
		d := &inv.Devices[i]
		if d.Name != device {
			continue
		}
		switch {
		case d.PhysFn != "":
			return fmt.Sprintf("PCI %s port %d", d.PhysFn, port)
		case d.PCIAddress != "":
			return fmt.Sprintf("PCI %s port %d", d.PCIAddress, port)
		}
		return fmt.Sprintf("%s port %d", d.Name, port)
	}
	return ""
}
