package e2erdma

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The data link: each VM's data NIC (MAC 52:54:00:09:…, 10.9.0.N/24,
// rxe0's netdev), joined through a QEMU socket network, a TCP connection
// between the two QEMUs on 127.0.0.1:SocketPort. Every RDMA test needs it;
// one that loses it fails for the rest of the lane with "No route to host"
// (ARP gets no answer), which says nothing of the cause. DataLink names
// what is broken, RepairDataLink puts back what the VMs' init set up.

// dataLinkScript checks this VM's side and pings the peer, printing "ok"
// or the problems, each line "broken: …", then what was read. ME and PEER
// are the data addresses.
const dataLinkScript = `IP=/sbin/ip
D=; for n in /sys/class/net/*; do case $(cat "$n/address") in 52:54:00:09:*) D=${n##*/} ;; esac; done
[ -n "$D" ] || { echo "broken: no data NIC (MAC 52:54:00:09:…)"; exit 0; }
bad=0
say() { echo "broken: $*"; bad=1; }
[ "$(cat /sys/class/net/$D/operstate)" = up ] || say "$D is $(cat /sys/class/net/$D/operstate) (carrier $(cat /sys/class/net/$D/carrier 2>/dev/null || echo -))"
$IP -o -4 addr show dev "$D" | grep -q " $ME/24 " || say "$D lacks $ME/24 (has: $($IP -o -4 addr show dev "$D" | awk '{print $4}' | tr '\n' ' '))"
via=$($IP route get "$PEER" 2>&1 | head -1)
case "$via" in *" dev $D "*) ;; *) say "the route to $PEER is not $D's: $via" ;; esac
# Pinged only over a NIC that is up and routes to the peer (else the ping
# leaves by the default route and hangs on QEMU's user network); bounded.
if [ $bad = 0 ] && ! timeout 10 ping -c 2 -W 3 -w 6 "$PEER" >/dev/null 2>&1; then
  say "no answer from $PEER over $D (neighbour: $($IP neigh show "$PEER" dev "$D" | head -1 | sed 's/ *$//'))"
fi
[ $bad = 1 ] || { echo ok; exit 0; }
echo "--- $D"; $IP -s link show dev "$D"; $IP -4 addr show dev "$D"; $IP route; $IP neigh show dev "$D"
echo "rp_filter $(cat /proc/sys/net/ipv4/conf/$D/rp_filter)/$(cat /proc/sys/net/ipv4/conf/all/rp_filter) arp_ignore $(cat /proc/sys/net/ipv4/conf/$D/arp_ignore)/$(cat /proc/sys/net/ipv4/conf/all/arp_ignore)"
rdma link show 2>&1`

// DataLink checks the data link from both VMs (one ssh each: the NIC up,
// its address and route, a ping of the peer) and the QEMU socket between
// them on this host. nil when it works; else an error naming each broken
// piece, with what was read.
func (p *Pair) DataLink(ctx context.Context) error {
	var broken, detail []string
	for i, vm := range p.VMs {
		peer := p.VMs[1-i]
		out, err := p.Shell(ctx, vm, nil, "ME="+vm.DataIP+" PEER="+peer.DataIP+"\n"+dataLinkScript)
		if err != nil {
			broken = append(broken, vm.Name+": "+firstLine(err.Error()))
			continue
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if b, ok := strings.CutPrefix(l, "broken: "); ok {
				broken = append(broken, vm.Name+": "+b)
			}
		}
		if strings.TrimSpace(out) != "ok" {
			detail = append(detail, vm.Name+":\n"+out)
		}
	}
	if len(broken) == 0 {
		return nil
	}
	if p.SocketPort > 0 {
		tcp, _ := os.ReadFile("/proc/net/tcp")
		if s := socketLink(string(tcp), p.SocketPort); s != "" {
			broken = append(broken, s)
		}
	}
	return fmt.Errorf("the VMs' data link is broken: %s\n%s", strings.Join(broken, "; "), strings.Join(detail, "\n"))
}

// socketLink reads /proc/net/tcp for the QEMU socket network on port: ""
// when both ends of the connection are established with nothing queued;
// else what is wrong (closed: the link cannot come back without booting
// the pair again; bytes queued: a QEMU does not read its end).
func socketLink(procNetTCP string, port int) string {
	hexPort := fmt.Sprintf("%04X", port)
	var ends int
	var queued []string
	for _, l := range strings.Split(procNetTCP, "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || f[3] != "01" { // 01: ESTABLISHED
			continue
		}
		if !strings.HasSuffix(f[1], ":"+hexPort) && !strings.HasSuffix(f[2], ":"+hexPort) {
			continue
		}
		ends++
		tx, rx, _ := strings.Cut(f[4], ":")
		t, _ := strconv.ParseUint(tx, 16, 64)
		r, _ := strconv.ParseUint(rx, 16, 64)
		if t > 0 || r > 0 {
			queued = append(queued, fmt.Sprintf("%s→%s send queue %d B, receive queue %d B", f[1], f[2], t, r))
		}
	}
	switch {
	case ends < 2:
		return fmt.Sprintf("the QEMU socket network on 127.0.0.1:%d has %d of its 2 established ends: the VMs are cut apart until they boot again", port, ends)
	case len(queued) > 0:
		return "the QEMU socket network has bytes waiting: " + strings.Join(queued, "; ")
	}
	return ""
}

// repairScript puts back the data NIC as the VM's init made it (up, MTU
// 4200, its address) and forgets its neighbours (permanent ones too); with FLAP=1 it also
// takes the NIC down and up (the virtio driver refills its receive ring)
// and waits for rxe0's port to be ACTIVE again (bounded: 20 s).
const repairScript = `IP=/sbin/ip
D=; for n in /sys/class/net/*; do case $(cat "$n/address") in 52:54:00:09:*) D=${n##*/} ;; esac; done
[ -n "$D" ] || { echo "no data NIC"; exit 1; }
if [ "$FLAP" = 1 ]; then $IP link set "$D" down; fi
$IP link set "$D" mtu 4200; $IP link set "$D" up
$IP addr replace "$ME/24" dev "$D"
$IP neigh flush dev "$D" nud all
i=0; until rdma link show rxe0/1 2>/dev/null | grep -q "state ACTIVE"; do
  i=$((i + 1)); [ $i -le 40 ] || { echo "rxe0 not ACTIVE after 20 s: $(rdma link show rxe0/1 2>&1)"; exit 1; }
  sleep 0.5
done`

// RepairDataLink puts the data link back as the VMs' init made it: first
// the NICs' state, address and neighbours; if the link still does not
// work, each NIC down and up. It returns what it did, and an error naming
// what is still broken.
func (p *Pair) RepairDataLink(ctx context.Context) (string, error) {
	var did []string
	for _, flap := range []string{"0", "1"} {
		for _, vm := range p.VMs {
			if _, err := p.Shell(ctx, vm, nil, "ME="+vm.DataIP+" FLAP="+flap+"\n"+repairScript); err != nil {
				return strings.Join(did, "; "), err
			}
		}
		did = append(did, map[string]string{"0": "the data NICs set up, their address and MTU put back, their neighbours flushed",
			"1": "the data NICs taken down and up"}[flap])
		err := p.DataLink(ctx)
		if err == nil {
			return strings.Join(did, "; "), nil
		}
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "the VMs are cut apart") {
			return strings.Join(did, "; "), err
		}
	}
	return strings.Join(did, "; "), p.DataLink(ctx)
}

// dataLinkBound bounds a check (two ssh and two pings) or a repair.
const dataLinkBound = 90 * time.Second
