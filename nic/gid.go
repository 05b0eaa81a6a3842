package nic

import (
	"fmt"
	"net/netip"
	"path"
	"strconv"
	"strings"
)

const zeroGID = "0000:0000:0000:0000:0000:0000:0000:0000"

// readGIDs returns the populated GID entries of a port with their type and
// netdev (gid_attrs exist on RoCE; reading an unpopulated one fails, so
// only populated entries are asked).
func readGIDs(fs sysfs, pdir string) []GID {
	names, err := fs.list(path.Join(pdir, "gids"))
	if err != nil {
		return nil
	}
	var out []GID
	for _, name := range sortedInts(names) {
		g, _ := fs.readIf(path.Join(pdir, "gids", strconv.Itoa(name)), populated)
		if !populated(g) {
			continue
		}
		out = append(out, GID{
			Index:  name,
			GID:    g,
			Type:   fs.str(path.Join(pdir, "gid_attrs", "types", strconv.Itoa(name))),
			Netdev: fs.str(path.Join(pdir, "gid_attrs", "ndevs", strconv.Itoa(name))),
			IPv4:   mappedIPv4(g),
		})
	}
	return out
}

func populated(gid string) bool { return gid != "" && gid != zeroGID }

// roceV2IPv4 is the index of the first RoCE v2 GID holding an IPv4
// address: the one perftest needs with -x on a RoCE fabric routed over IPv4.
func roceV2IPv4(gids []GID) *int {
	for _, g := range gids {
		if strings.EqualFold(g.Type, "RoCE v2") && g.IPv4 != "" {
			i := g.Index
			return &i
		}
	}
	return nil
}

// mappedIPv4 returns the address of an IPv4-mapped GID (::ffff:a.b.c.d).
func mappedIPv4(gid string) string {
	parts := strings.Split(gid, ":")
	if len(parts) != 8 || strings.Join(parts[:6], ":") != "0000:0000:0000:0000:0000:ffff" {
		return ""
	}
	hi, err1 := strconv.ParseUint(parts[6], 16, 16)
	lo, err2 := strconv.ParseUint(parts[7], 16, 16)
	if err1 != nil || err2 != nil {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d.%d", hi>>8, hi&0xff, lo>>8, lo&0xff)
}

func sortedInts(names []string) []int {
	var out []int
	for _, n := range names {
		if v, err := strconv.Atoi(n); err == nil {
			out = append(out, v)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Holds reports whether the GID is the GID of addr: an IPv4 address's
// IPv4-mapped GID (::ffff:a.b.c.d), an IPv6 address's own (RoCE v2 GIDs
// are the netdev's IP addresses).
func (g GID) Holds(addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	if a.Is4() && g.IPv4 != "" {
		return g.IPv4 == a.String()
	}
	ga, err := netip.ParseAddr(g.GID)
	return err == nil && ga.Unmap() == a
}

// linkLocal: an fe80::/10 GID (from the netdev's MAC), which routers do
// not forward: a routed RoCE v2 fabric cannot carry it.
func (g GID) linkLocal() bool {
	ga, err := netip.ParseAddr(g.GID)
	return err == nil && ga.IsLinkLocalUnicast()
}
