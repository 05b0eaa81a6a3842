package nixlnative

import (
	"bytes"
	"context"
	"fmt"
	"time"
	"unsafe"
)

// serve is the target (prefill): its regions registered and published,
// the initiator's metadata loaded, then notifications read without a
// pause (nixlbench's target spins on getNotifs) until the initiator's
// "done", its failure, or the time limit.
func (in *initiator) serve(ctx context.Context) error {
	o := in.o
	deadline := time.Now().Add(o.rendezvous)
	if err := in.start(ctx); err != nil {
		return err
	}
	if err := in.register(o.regionBytes()); err != nil {
		return err
	}
	fmt.Fprintln(in.out, in.banner())
	if err := in.publish(ctx); err != nil {
		return err
	}
	ini, err := in.etcd.wait(ctx, "initiator", deadline)
	if err != nil {
		return err
	}
	if err := in.loadPeer(ini.Metadata); err != nil {
		return err
	}
	fmt.Fprintf(in.out, "# target: %d regions of %d B in %s (device %d) serve %s\n", o.regions, in.mem.capacity, in.seg(), o.device, in.remote)
	c := in.lib
	var m uintptr
	if err := check("nixl_capi_create_notif_map", c.createNotifMap(&m)); err != nil {
		return err
	}
	defer c.destroyNotifMap(m)
	// Each transfer's flush waits for this loop's getNotifs to progress UCX
	// and answer, so the loop is as lean as nixlbench's: getNotifs through
	// SyscallN, the initiator's count every 64 spins, the messages only when
	// it grows, the map cleared only when it grows big (getNotifs appends).
	// Draining the map after every getNotifs cost 1-5 us a transfer.
	name := append([]byte(in.remote), 0) // the initiator's messages are keyed by its name
	poll := c.pollCall(in.agent, m)
	var (
		count, seen, size uintptr
		data              unsafe.Pointer
	)
	notes, look := 0, time.Now().Add(time.Second)
	for spins := 0; ; spins++ {
		if spins&0xfff == 0 && time.Now().After(look) {
			if why := in.etcd.ended(ctx, "initiator"); why != "" {
				return fmt.Errorf("the initiator ended before it was done after %d notifications: %s", notes, why)
			}
			if ctx.Err() != nil {
				return fmt.Errorf("the initiator did not finish within --time-limit %s (%d notifications)", o.timeLimit, notes)
			}
			look = time.Now().Add(time.Second)
		}
		if err := check("nixl_capi_get_notifs", poll.call()); err != nil {
			return err
		}
		if spins&63 != 0 {
			continue // the count every 64 spins: done is seen at most 64 spins late
		}
		switch s := c.notifsOf(m, &name[0], &count); {
		case s == capiInvalidParam:
			continue // the initiator not in the map: none from it yet
		case s != capiSuccess:
			return check("nixl_capi_notif_map_get_notifs_size", s)
		}
		for ; seen < count; seen++ {
			if err := check("nixl_capi_notif_map_get_notif", c.notifAt(m, &name[0], seen, &data, &size)); err != nil {
				return err
			}
			notes++
			if size == uintptr(len(doneNotif)) && bytes.Equal(unsafe.Slice((*byte)(data), size), []byte(doneNotif)) {
				fmt.Fprintf(in.out, "# target: done after %d notifications\n", notes)
				return nil
			}
		}
		if seen >= maxKeptNotifs {
			if err := check("nixl_capi_notif_map_clear", c.notifMapClear(m)); err != nil {
				return err
			}
			seen = 0
		}
	}
}

// maxKeptNotifs bounds the map the target's loop lets grow: NIXL appends
// to a vector that clear frees, so a small bound keeps the regrowth (and
// the clear) a few KiB of work once in 4096 transfers.
const maxKeptNotifs = 4096
