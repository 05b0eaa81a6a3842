package nic

import (
	"path"
	"strconv"
)

// netdevOf finds the netdev of port n the way ibdev2netdev does: among the
// PCI function's netdevs the one whose dev_port (or, for old IPoIB drivers,
// dev_id) is n-1; for software devices the "parent" attribute; as a last
// resort the netdev of the port's first GID.
func netdevOf(fs sysfs, dir string, n int, gids []GID) string {
	netDir := path.Join(dir, "device", "net")
	if names, err := fs.list(netDir); err == nil && len(names) > 0 {
		for _, nd := range names {
			if devPort(fs, path.Join(netDir, nd)) == n-1 {
				return nd
			}
		}
		if len(names) == 1 {
			return names[0]
		}
	}
	if p := fs.str(path.Join(dir, "parent")); p != "" {
		return p
	}
	for _, g := range gids {
		if g.Netdev != "" {
			return g.Netdev
		}
	}
	return ""
}

func devPort(fs sysfs, netdir string) int {
	if v, err := strconv.Atoi(fs.str(path.Join(netdir, "dev_port"))); err == nil && v > 0 {
		return v
	}
	if v, err := strconv.ParseInt(fs.str(path.Join(netdir, "dev_id")), 0, 32); err == nil {
		return int(v)
	}
	return 0
}

// ibMTUs are the MTUs an RDMA port can run, largest first.
var ibMTUs = []int{4096, 2048, 1024, 512, 256}

// activeMTU is the RDMA MTU a netdev MTU allows. On RoCE the kernel keeps
// room for the GRH, UDP, BTH, extended and ICRC headers (iboe_get_mtu:
// 96 bytes); on InfiniBand the IPoIB MTU is the IB MTU less its 4-byte header.
func activeMTU(linkLayer string, netdevMTU int) int {
	room := netdevMTU + 4
	if linkLayer == "Ethernet" {
		room = netdevMTU - 96
	}
	for _, m := range ibMTUs {
		if m <= room {
			return m
		}
	}
	return 0
}
