package nic

import (
	"strings"
	"testing"
)

// TestDataPath: the device of the data interface, chosen from what the
// cluster says (device-info, a PCI function) or the interface and its
// address, never "the first ACTIVE device"; its RoCE v2 GID on that
// interface (the address's IPv4-mapped one first); on InfiniBand its port.
func TestDataPath(t *testing.T) {
	cx7, err := Discover(Options{Root: tree("cx7-roce-gpu"), NoGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	ib, err := Discover(Options{Root: tree("ib-ndr"), NoGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		inv  *Inventory
		req  DataPathRequest
		dev  string
		port int
		gid  int // -1: none
		from string
	}{
		{"device-info rdma-device", cx7, DataPathRequest{RDMADevice: "mlx5_1", From: "network-status device-info", Interface: "ens2f0np0"}, "mlx5_1", 1, 3, "network-status device-info: rdma-device mlx5_1"},
		{"device-info pci-address", cx7, DataPathRequest{PCIAddresses: []string{"0000:9a:00.0"}, From: "network-status device-info"}, "mlx5_1", 1, 3, "network-status device-info: 0000:9a:00.0"},
		{"PCIDEVICE, two functions, the interface's", cx7, DataPathRequest{PCIAddresses: []string{"0000:1a:00.0", "0000:9a:00.0"}, From: "PCIDEVICE_OPENSHIFT_IO_MLX", Interface: "ens2f0np0"}, "mlx5_1", 1, 3, "PCIDEVICE_OPENSHIFT_IO_MLX: 0000:9a:00.0"},
		{"netdev", cx7, DataPathRequest{Interface: "ens2f0np0"}, "mlx5_1", 1, 3, "netdev ens2f0np0"},
		{"address (host network)", cx7, DataPathRequest{Address: "192.168.11.11"}, "mlx5_1", 1, 3, "GID of 192.168.11.11"},
		{"InfiniBand: the port, no GID", ib, DataPathRequest{Interface: "ib0"}, "mlx5_0", 1, -1, "netdev ib0"},
	} {
		dp, err := c.inv.DataPath(c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		gid := -1
		if dp.GIDIndex != nil {
			gid = *dp.GIDIndex
		}
		if dp.Device != c.dev || dp.Port != c.port || gid != c.gid || dp.From != c.from || dp.RateBps <= 0 {
			t.Errorf("%s: %+v gid %d; want %s port %d gid %d from %q", c.name, dp, gid, c.dev, c.port, c.gid, c.from)
		}
	}
	for _, c := range []struct {
		req  DataPathRequest
		want string
	}{
		{DataPathRequest{RDMADevice: "mlx5_7", From: "network-status device-info"}, "network-status device-info names RDMA device mlx5_7, which is not under /sys/class/infiniband here"},
		{DataPathRequest{PCIAddresses: []string{"0000:3b:02.1"}, From: "PCIDEVICE_X"}, "PCIDEVICE_X gives PCI function(s) 0000:3b:02.1, which carry no RDMA device here"},
		{DataPathRequest{Interface: "net1", Address: "10.1.2.3"}, "no RDMA device serves the data interface net1 (10.1.2.3)"},
	} {
		if _, err := cx7.DataPath(c.req); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.req, err, c.want)
		}
	}
}

// TestDataPathOnTheSoftRoCEVM: the tree recorded in the soft-RoCE VM with
// two rails (rxe0 on eth0, rxe1 on eth2 with GIDs of 10.9.5.1, 10.9.1.1
// and an IPv6 address): the data address picks the device and its own
// GID, not the first device nor the first IPv4 GID (which the older rule,
// RoCEv2GIDIndex, took).
func TestDataPathOnTheSoftRoCEVM(t *testing.T) {
	inv, err := Discover(Options{Root: tree("rxe-vm-rails"), NoGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		req      DataPathRequest
		dev      string
		gid      int
		from     string
		roceV2Of int // the older rule's pick on that device
	}{
		{DataPathRequest{Address: "10.9.1.1"}, "rxe1", 2, "GID of 10.9.1.1", 1},
		{DataPathRequest{Interface: "eth2", Address: "10.9.1.1"}, "rxe1", 2, "netdev eth2", 1},
		{DataPathRequest{Address: "10.9.0.1"}, "rxe0", 1, "GID of 10.9.0.1", 1},
	} {
		dp, err := inv.DataPath(c.req)
		if err != nil || dp.Device != c.dev || dp.GIDIndex == nil || *dp.GIDIndex != c.gid || dp.From != c.from || dp.Netdev == "" {
			t.Errorf("%+v: %+v %v; want %s GID %d from %q", c.req, dp, err, c.dev, c.gid, c.from)
		}
		for _, d := range inv.Devices {
			if d.Name == c.dev && (d.Ports[0].RoCEv2GIDIndex == nil || *d.Ports[0].RoCEv2GIDIndex != c.roceV2Of) {
				t.Errorf("%s: the recorded tree changed (RoCEv2GIDIndex %v)", d.Name, d.Ports[0].RoCEv2GIDIndex)
			}
		}
	}
}

// TestDataGIDPrefersTheDataAddress: among several RoCE v2 GIDs of the
// interface, the data address's; else the first IPv4-mapped; never one of
// another netdev.
func TestDataGIDPrefersTheDataAddress(t *testing.T) {
	p := &Port{GIDs: []GID{
		{Index: 0, Type: "RoCE v2", Netdev: "eth2", GID: "fe80::"},
		{Index: 1, Type: "IB/RoCE v1", Netdev: "eth2", IPv4: "10.9.1.1"},
		{Index: 2, Type: "RoCE v2", Netdev: "eth2", IPv4: "10.9.5.1"},
		{Index: 3, Type: "RoCE v2", Netdev: "eth2", IPv4: "10.9.1.1"},
		{Index: 4, Type: "RoCE v2", Netdev: "eth0", IPv4: "10.9.0.1"},
	}}
	for _, c := range []struct {
		iface, addr string
		want        int
	}{{"eth2", "10.9.1.1", 3}, {"eth2", "", 2}, {"eth0", "", 4}, {"", "10.9.0.1", 4}} {
		if g := DataGID(p, c.iface, c.addr); g == nil || *g != c.want {
			t.Errorf("%s %s: %v, want %d", c.iface, c.addr, g, c.want)
		}
	}
}
