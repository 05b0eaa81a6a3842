package etcd

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// clearBound bounds the clearing of one leg's keys.
const clearBound = 5 * time.Second

// Group follows one leg's nixlbench group in the run's etcd
// (xferbench/<group>/, the double-slash keys included): the leases its
// keys take (the rank keys, the lock its Lock call holds), seen as they are
// written. nixlbench itself cancels its keep-alive and deletes its keys at
// the end, but does not revoke the lease, which outlives it by its TTL;
// a killed one leaves keys and leases both. Clear removes all of it, so a
// stale //size never shifts the next leg's ranks and nothing of the leg
// outlives it.
type Group struct {
	c      *clientv3.Client
	prefix string
	stop   context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	leases []clientv3.LeaseID
}

// NewGroup follows the group whose keys are under prefix
// (tools.EtcdPrefix of the leg's group) in the etcd c reaches.
func NewGroup(c *clientv3.Client, prefix string) *Group {
	return &Group{c: c, prefix: prefix}
}

// Watch starts noting the leases the group's keys are written with.
func (k *Group) Watch() {
	if k == nil {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	k.stop, k.done = stop, make(chan struct{})
	go func() {
		defer close(k.done)
		// Watch itself waits for the stream to open: on this goroutine,
		// an etcd that went away holds up nothing but the watch.
		ch := k.c.Watch(clientv3.WithRequireLeader(ctx), k.prefix, clientv3.WithPrefix(), clientv3.WithFilterDelete())
		for resp := range ch {
			for _, ev := range resp.Events {
				if l := clientv3.LeaseID(ev.Kv.Lease); l != 0 {
					k.note(l)
				}
			}
		}
	}()
}

func (k *Group) note(l clientv3.LeaseID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, seen := range k.leases {
		if seen == l {
			return
		}
	}
	k.leases = append(k.leases, l)
}

// Clear stops the watch, revokes every lease noted (a lease that expired
// or was revoked meanwhile is gone already), then removes whatever is left
// under the prefix (ClearPrefix revokes the leases of the keys still
// there). It runs on a fresh context: after Ctrl-C the run's is done.
func (k *Group) Clear() {
	if k == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), clearBound)
	defer cancel()
	if k.stop != nil {
		k.stop()
		select {
		case <-k.done:
		case <-ctx.Done():
		}
	}
	k.mu.Lock()
	leases := k.leases
	k.leases = nil
	k.mu.Unlock()
	for _, l := range leases {
		_, _ = k.c.Revoke(ctx, l)
	}
	_, _, _ = ClearPrefix(ctx, k.c, k.prefix)
}
