// Package nic discovers the RDMA NICs of a host from sysfs: devices and
// ports, their state, link layer and netdev, the port rate and the PCIe link
// behind it, the RoCE v2 GID index, and which GPUs sit close to which NIC.
// The runner uses it for `lineRate: auto`, the default device and GID index,
// and to skip RDMA tests on hosts without RDMA; `rdmabench discover` prints it.
//
// Everything is read under a root directory ("/" on a live host), so tests
// run on recorded trees and a host can be recorded for a bug report.
package nic

// Inventory is what discovery found on one host.
type Inventory struct {
	// Root is the directory sysfs was read under ("/" on a live host).
	Root    string   `json:"root"`
	Devices []Device `json:"devices"`
	// GPUs is the GPU to NIC affinity from `nvidia-smi topo -m`, when the
	// host has GPUs.
	GPUs []GPU `json:"gpus,omitempty"`
}

// Device is one RDMA device (mlx5_0, rxe0) and the PCI function behind it.
type Device struct {
	Name     string `json:"name"`
	NodeType string `json:"nodeType,omitempty"` // "1: CA"
	FWVer    string `json:"fwVer,omitempty"`
	// PCIAddress is empty for software devices (rxe, siw).
	PCIAddress string `json:"pciAddress,omitempty"`
	// PhysFn is the physical function's PCI address where the device is an
	// SR-IOV virtual function (its physfn link): the VFs of one PF send on
	// its port and share its line rate. Empty for a PF or a software device.
	PhysFn string `json:"physFn,omitempty"`
	// NUMANode is -1 when unknown.
	NUMANode int `json:"numaNode"`
	// PCIeSpeed and PCIeWidth are the current link ("32.0 GT/s PCIe", 16).
	PCIeSpeed string `json:"pcieSpeed,omitempty"`
	PCIeWidth int    `json:"pcieWidth,omitempty"`
	// PCIeBps is the usable PCIe data rate in bits/s after line encoding;
	// 0 when there is no PCIe link (software devices).
	PCIeBps float64 `json:"pcieBps,omitempty"`
	Ports   []Port  `json:"ports"`
}

// Port is one port of an RDMA device.
type Port struct {
	Port      int    `json:"port"`
	State     string `json:"state"`     // ACTIVE, DOWN, INIT …
	PhysState string `json:"physState"` // LinkUp, Disabled …
	LinkLayer string `json:"linkLayer"` // Ethernet or InfiniBand
	// Netdev is what ibdev2netdev shows for this port.
	Netdev string `json:"netdev,omitempty"`
	// Rate is the sysfs rate text, "400 Gb/sec (4X NDR)".
	Rate string `json:"rate"`
	// RateBps is the port line rate in bits/s, parsed from Rate.
	RateBps float64 `json:"rateBps"`
	// CeilingBps is the lower of the port rate and the PCIe bandwidth: the
	// most this port can move.
	CeilingBps float64 `json:"ceilingBps"`
	// NetdevMTU is the netdev's MTU; ActiveMTU the RDMA MTU it allows.
	NetdevMTU int `json:"netdevMtu,omitempty"`
	ActiveMTU int `json:"activeMtu,omitempty"`
	// RoCEv2GIDIndex is the GID index of the RoCE v2 IPv4 GID (what
	// perftest -x wants); nil on InfiniBand or when none is configured.
	RoCEv2GIDIndex *int  `json:"roceV2GidIndex,omitempty"`
	GIDs           []GID `json:"gids,omitempty"`
}

// GID is one populated entry of a port's GID table.
type GID struct {
	Index  int    `json:"index"`
	GID    string `json:"gid"`
	Type   string `json:"type,omitempty"` // "RoCE v2", "IB/RoCE v1"
	Netdev string `json:"netdev,omitempty"`
	// IPv4 is the address of an IPv4-mapped GID, "" otherwise.
	IPv4 string `json:"ipv4,omitempty"`
}

// GPU is one GPU and the NICs nvidia-smi says are nearest to it.
type GPU struct {
	Name string `json:"name"` // "GPU0"
	// NICs maps each NIC's RDMA device to its relation (PIX, PXB, NODE, SYS …).
	NICs map[string]string `json:"nics"`
	// Nearest lists the RDMA devices with the closest relation.
	Nearest  []string `json:"nearest,omitempty"`
	Relation string   `json:"relation,omitempty"`
	CPUs     string   `json:"cpuAffinity,omitempty"`
	NUMA     string   `json:"numaAffinity,omitempty"`
}
