package e2erdma

import (
	"context"
	"strings"
	"testing"
)

// /proc/net/tcp as this host had it with the lane's pair up: vm1's QEMU
// listening on 42210 (0A), the connection from vm2's QEMU at both ends
// (01), and an unrelated ssh forward.
const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A4E2 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:A4E2 0100007F:D5C4 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:D5C4 0100007F:A4E2 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:A4D9 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4 1 0000000000000000 20 4 30 10 -1
`

func TestSocketLink(t *testing.T) {
	if got := socketLink(procNetTCP, 42210); got != "" {
		t.Errorf("both ends established: %q; want nothing wrong", got)
	}
	closed := strings.Join(strings.Split(procNetTCP, "\n")[:2], "\n") // the listener alone
	if got, want := socketLink(closed, 42210), "the QEMU socket network on 127.0.0.1:42210 has 0 of its 2 established ends: the VMs are cut apart until they boot again"; got != want {
		t.Errorf("closed: %q; want %q", got, want)
	}
	stuck := strings.Replace(procNetTCP, "01 00000000:00000000 00:00000000 00000000     0        0 2", "01 00000000:0001F400 00:00000000 00000000     0        0 2", 1)
	if got, want := socketLink(stuck, 42210), "the QEMU socket network has bytes waiting: 0100007F:A4E2→0100007F:D5C4 send queue 0 B, receive queue 128000 B"; got != want {
		t.Errorf("unread: %q; want %q", got, want)
	}
}

// TestDataLinkOnVMs: the lane's data-link check names what is broken on
// which VM, and the repair puts it back, for the two ways a VM's side can
// break: a wrong neighbour entry for the peer (vm2 sends to a MAC nobody
// has: "No route to host" once it fails), and the NIC down (vm1).
func TestDataLinkOnVMs(t *testing.T) {
	needDataLink(t)
	for _, tc := range []struct {
		name, vm, line, want string
	}{
		{"neighbour", "vm2", "/sbin/ip neigh replace 10.9.0.1 lladdr 02:00:00:00:00:01 nud permanent dev eth0",
			"vm2: no answer from 10.9.0.1 over eth0 (neighbour: 10.9.0.1 lladdr 02:00:00:00:00:01 PERMANENT)"},
		{"nic-down", "vm1", "/sbin/ip link set eth0 down", "vm1: eth0 is down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := pair.VMs[0]
			if tc.vm == "vm2" {
				vm = pair.VMs[1]
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*dataLinkBound)
			defer cancel()
			t.Cleanup(func() { dataLinkRestored(t) })
			if _, err := pair.Shell(ctx, vm, nil, tc.line); err != nil {
				t.Fatal(err)
			}
			err := pair.DataLink(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("after %q on %s: %v; want the check to name %q", tc.line, tc.vm, err, tc.want)
			}
			t.Logf("%s", firstLine(err.Error()))
			did, err := pair.RepairDataLink(ctx)
			if err != nil {
				t.Fatalf("repair (%s): %v", did, err)
			}
			t.Logf("repaired: %s", did)
		})
	}
}

// dataLinkRestored puts the data link back after a test that broke it on
// purpose, whatever happened to the test.
func dataLinkRestored(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*dataLinkBound)
	defer cancel()
	if pair.DataLink(ctx) == nil {
		return
	}
	if did, err := pair.RepairDataLink(ctx); err != nil {
		t.Errorf("restoring the data link (%s): %v", did, err)
	}
}
