package nixlnative

import (
	"bytes"
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/rdmabench/rdmabench/probe/dl"
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
	notes, look := 0, time.Now().Add(time.Second)
	for {
		if time.Now().After(look) {
			if why := in.etcd.ended(ctx, "initiator"); why != "" {
				return fmt.Errorf("the initiator ended before it was done after %d notifications: %s", notes, why)
			}
			if ctx.Err() != nil {
				return fmt.Errorf("the initiator did not finish within --time-limit %s (%d notifications)", o.timeLimit, notes)
			}
			look = time.Now().Add(time.Second)
		}
		if err := check("nixl_capi_get_notifs", c.getNotifs(in.agent, m, 0)); err != nil {
			return err
		}
		n, done, err := in.drain(m)
		if err != nil {
			return err
		}
		notes += n
		if done {
			fmt.Fprintf(in.out, "# target: done after %d notifications\n", notes)
			return nil
		}
	}
}

// drain counts the map's notifications, says whether one is the
// initiator's "done", and empties the map (getNotifs appends to it).
func (in *initiator) drain(m uintptr) (n int, done bool, err error) {
	c := in.lib
	var agents uintptr
	if err := check("nixl_capi_notif_map_size", c.notifMapSize(m, &agents)); err != nil || agents == 0 {
		return 0, false, err
	}
	for i := range agents {
		var name *byte
		if err := check("nixl_capi_notif_map_get_agent_at", c.notifMapGetAgentAt(m, i, &name)); err != nil {
			return n, done, err
		}
		agent := dl.GoString(name)
		var k uintptr
		if err := check("nixl_capi_notif_map_get_notifs_size", c.notifMapGetNotifsSize(m, agent, &k)); err != nil {
			return n, done, err
		}
		n += int(k)
		for j := range k {
			var data unsafe.Pointer
			var size uintptr
			if err := check("nixl_capi_notif_map_get_notif", c.notifMapGetNotif(m, agent, j, &data, &size)); err != nil {
				return n, done, err
			}
			if size == uintptr(len(doneNotif)) && bytes.Equal(unsafe.Slice((*byte)(data), size), []byte(doneNotif)) {
				done = true
			}
		}
	}
	return n, done, check("nixl_capi_notif_map_clear", c.notifMapClear(m))
}
