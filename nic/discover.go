package nic

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/Mellanox/rdmamap"
)

// classDir is where RDMA devices are listed, relative to the root.
var classDir = strings.TrimPrefix(rdmamap.RdmaClassDir, "/")

// Options say where discovery reads from.
type Options struct {
	// Root is the directory sysfs lives under; "" or "/" is the live host.
	Root string
	// Record, when set, is a directory that receives a copy of every file
	// discovery read (a recorded tree for tests and bug reports).
	Record string
	// NoGPU skips `nvidia-smi topo -m`.
	NoGPU bool
}

// Discover reads every RDMA device under opts.Root. A host without RDMA
// devices is not an error: the inventory is empty.
func Discover(opts Options) (*Inventory, error) {
	root := opts.Root
	if root == "" {
		root = "/"
	}
	fs := sysfs{root: root, rec: opts.Record}
	inv := &Inventory{Root: root, Devices: []Device{}}
	names, err := fs.list(classDir)
	if err != nil {
		return inv, nil // no /sys/class/infiniband: no RDMA here
	}
	for _, name := range names {
		d, err := readDevice(fs, name)
		if err != nil {
			return nil, err
		}
		inv.Devices = append(inv.Devices, d)
	}
	if !opts.NoGPU {
		gpus, err := readTopo(fs)
		if err != nil {
			return nil, err
		}
		inv.GPUs = gpus
	}
	return inv, nil
}

// HasRDMA reports whether the host under root has an RDMA device with an
// ACTIVE port: the runner's test for running or skipping RDMA tests.
func HasRDMA(root string) bool {
	inv, err := Discover(Options{Root: root, NoGPU: true})
	if err != nil {
		return false
	}
	for _, d := range inv.Devices {
		for _, p := range d.Ports {
			if p.State == "ACTIVE" {
				return true
			}
		}
	}
	return false
}

func readDevice(fs sysfs, name string) (Device, error) {
	dir := path.Join(classDir, name)
	d := Device{
		Name:     name,
		NodeType: fs.str(path.Join(dir, "node_type")),
		FWVer:    fs.str(path.Join(dir, "fw_ver")),
		NUMANode: -1,
	}
	readPCI(fs, dir, &d)
	ports, err := fs.list(path.Join(dir, "ports"))
	if err != nil {
		return d, fmt.Errorf("%s: RDMA device %s has no ports directory: %w", fs.path(dir), name, err)
	}
	for _, p := range ports {
		n, err := strconv.Atoi(p)
		if err != nil {
			continue
		}
		d.Ports = append(d.Ports, readPort(fs, dir, n, d.PCIeBps))
	}
	return d, nil
}

// readPCI fills the PCI address, NUMA node and PCIe link of a hardware
// device; software devices (rxe) have no "device" link and keep zeros.
func readPCI(fs sysfs, dir string, d *Device) {
	pci := path.Join(dir, "device")
	if !fs.exists(pci) {
		return
	}
	d.PCIAddress = ueventValue(fs.str(path.Join(pci, "uevent")), "PCI_SLOT_NAME")
	d.PhysFn = ueventValue(fs.str(path.Join(pci, "physfn", "uevent")), "PCI_SLOT_NAME")
	if n, err := strconv.Atoi(fs.str(path.Join(pci, "numa_node"))); err == nil {
		d.NUMANode = n
	}
	d.PCIeSpeed = fs.str(path.Join(pci, "current_link_speed"))
	d.PCIeWidth, _ = strconv.Atoi(strings.TrimPrefix(fs.str(path.Join(pci, "current_link_width")), "x"))
	d.PCIeBps = PCIeBandwidth(d.PCIeSpeed, d.PCIeWidth)
}

func ueventValue(uevent, key string) string {
	for _, line := range strings.Split(uevent, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func readPort(fs sysfs, dir string, n int, pcieBps float64) Port {
	pdir := path.Join(dir, "ports", strconv.Itoa(n))
	p := Port{
		Port:      n,
		State:     stateName(fs.str(path.Join(pdir, "state"))),
		PhysState: stateName(fs.str(path.Join(pdir, "phys_state"))),
		LinkLayer: fs.str(path.Join(pdir, "link_layer")),
		Rate:      fs.str(path.Join(pdir, "rate")),
	}
	p.RateBps, _ = ParseRate(p.Rate)
	p.CeilingBps = ceiling(p.RateBps, pcieBps)
	p.GIDs = readGIDs(fs, pdir)
	p.RoCEv2GIDIndex = roceV2IPv4(p.GIDs)
	p.Netdev = netdevOf(fs, dir, n, p.GIDs)
	if p.Netdev != "" {
		p.NetdevMTU, _ = strconv.Atoi(fs.str(path.Join("sys/class/net", p.Netdev, "mtu")))
		p.ActiveMTU = activeMTU(p.LinkLayer, p.NetdevMTU)
	}
	return p
}

// stateName turns "4: ACTIVE" into "ACTIVE" and "5: LinkUp" into "LinkUp".
func stateName(s string) string {
	if _, v, ok := strings.Cut(s, ":"); ok {
		return strings.TrimSpace(v)
	}
	return s
}

func ceiling(rate, pcie float64) float64 {
	if pcie > 0 && (rate == 0 || pcie < rate) {
		return pcie
	}
	return rate
}
