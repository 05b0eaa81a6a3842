package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3lock/v3lockpb"
	"go.uber.org/zap"
)

// etcdRT is nixlbench's ETCD runtime (src/runtime/etcd/etcd_rt.cpp):
// rank by registration order under a lock, barriers and point-to-point
// messages as keys polled every few seconds.
type etcdRT struct {
	c      *clientv3.Client
	prefix string // "xferbench/<group>/"
	rank   int
	size   int
	gen    int // barrier generation, shared by all barrier ids
	lease  clientv3.LeaseID
	stop   context.CancelFunc
	poll   time.Duration
	tries  int
}

// pollInterval is 3 s as in nixlbench; NIXLBENCH_STANDIN_POLL_MS shortens
// it so tests run quickly (the keys and their order are unchanged).
func pollInterval() time.Duration {
	if v, err := strconv.Atoi(os.Getenv("NIXLBENCH_STANDIN_POLL_MS")); err == nil && v > 0 {
		return time.Duration(v) * time.Millisecond
	}
	return 3 * time.Second
}

func newEtcdRT(endpoints, group string, size int) (*etcdRT, error) {
	eps := strings.Split(endpoints, ",")
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	return &etcdRT{c: c, prefix: "xferbench/" + group + "/", size: size, poll: pollInterval(), tries: 60}, nil
}

// ctx bounds one etcd call.
func opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

// setup registers this process as etcd_rt.cpp does: etcd's Lock service
// on "<prefix>/lock" under a 10-s lease kept alive (etcd-cpp-apiv3's
// SyncClient::lock), read //size, the rank key under a 30-s lease kept
// alive, //size = rank+1, then unlock (revoke the lock's lease, Unlock).
func (rt *etcdRT) setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The lock's lease grant is the first RPC: an unreachable etcd fails here.
	gctx, gcancel := context.WithTimeout(ctx, 5*time.Second)
	lease, err := rt.c.Grant(gctx, 10)
	gcancel()
	if err != nil {
		return fmt.Errorf("Failed to acquire lock: %v", err)
	}
	kctx, stopLockKeepAlive := context.WithCancel(context.Background())
	defer stopLockKeepAlive()
	if ch, err := rt.c.KeepAlive(kctx, lease.ID); err == nil {
		go func() {
			for range ch {
			}
		}()
	}
	locks := v3lockpb.NewLockClient(rt.c.ActiveConnection())
	held, err := locks.Lock(ctx, &v3lockpb.LockRequest{Name: []byte(rt.prefix + "/lock"), Lease: int64(lease.ID)})
	if err != nil {
		return fmt.Errorf("Failed to acquire lock: %v", err)
	}
	defer func() { // as SyncClient::unlock: the lock's lease first, then Unlock
		uctx, ucancel := opCtx()
		defer ucancel()
		stopLockKeepAlive()
		_, _ = rt.c.Revoke(uctx, lease.ID)
		_, _ = locks.Unlock(uctx, &v3lockpb.UnlockRequest{Key: held.Key})
	}()
	resp, err := rt.c.Get(ctx, rt.prefix+"/size")
	if err != nil {
		return err
	}
	rt.rank = 0
	if len(resp.Kvs) > 0 {
		rt.rank, _ = strconv.Atoi(string(resp.Kvs[0].Value))
	}
	if rt.rank >= rt.size {
		fmt.Fprintf(os.Stderr, "Rank %d is greater than or equal to global size %d\n", rt.rank, rt.size)
		rt.cleanup()
		return errors.New("rank overflow")
	}
	if err := rt.keepRankAlive(ctx); err != nil {
		return err
	}
	_, err = rt.c.Put(ctx, rt.prefix+"/size", strconv.Itoa(rt.rank+1))
	return err
}

func (rt *etcdRT) keepRankAlive(ctx context.Context) error {
	lease, err := rt.c.Grant(ctx, 30)
	if err != nil {
		return err
	}
	rt.lease = lease.ID
	kctx, stop := context.WithCancel(context.Background())
	rt.stop = stop
	ch, err := rt.c.KeepAlive(kctx, lease.ID)
	if err != nil {
		return err
	}
	go func() {
		for range ch {
		}
	}()
	_, err = rt.c.Put(ctx, rt.prefix+"/rank/"+strconv.Itoa(rt.rank), "active", clientv3.WithLease(lease.ID))
	return err
}

// barrier: put barrier/<id>/<gen>/<rank>, poll the count; rank 0 removes
// the generation's keys once everyone arrived.
func (rt *etcdRT) barrier(id string) error {
	p := fmt.Sprintf("%sbarrier/%s/%d/", rt.prefix, id, rt.gen)
	rt.gen++
	ctx, cancel := opCtx()
	defer cancel()
	if _, err := rt.c.Put(ctx, p+strconv.Itoa(rt.rank), "1"); err != nil {
		fmt.Fprintf(os.Stderr, "Error in barrier put %s rank %d completed 0/%d ranks)\n", p, rt.rank, rt.size)
		return err
	}
	n := int64(0)
	for i := 0; i < rt.tries; i++ {
		pctx, pcancel := opCtx()
		resp, err := rt.c.Get(pctx, p, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil {
			n = resp.Count
			if n == int64(rt.size) || n == 0 {
				if rt.rank == 0 {
					_, _ = rt.c.Delete(pctx, p, clientv3.WithPrefix())
				}
				pcancel()
				return nil
			}
		}
		pcancel()
		time.Sleep(rt.poll)
	}
	ctx, cancel = opCtx()
	defer cancel()
	fmt.Fprintf(os.Stderr, "Error in barrier wait %s rank %d completed %d/%d ranks)\n", p, rt.rank, n, rt.size)
	_, _ = rt.c.Delete(ctx, p, clientv3.WithPrefix())
	return errors.New("barrier timeout")
}

func (rt *etcdRT) msgKey(kind string, src, dst int) string {
	return fmt.Sprintf("%smsg+%s/src=%d/dst=%d", rt.prefix, kind, src, dst)
}

// sendInt puts the value and waits for the receiver's ack, then removes it.
func (rt *etcdRT) sendInt(v, dst int) error {
	k := rt.msgKey("int_data", rt.rank, dst)
	ctx, cancel := opCtx()
	defer cancel()
	if _, err := rt.c.Put(ctx, k, strconv.Itoa(v)); err != nil {
		return err
	}
	return rt.awaitAck(k+"/ack", "Timeout waiting for int data acknowledgment from rank %d", dst)
}

// sendChar puts the bytes (…/data) then the header "<src>:<dst>:<count>".
func (rt *etcdRT) sendChar(data []byte, dst int) error {
	k := rt.msgKey("char_data", rt.rank, dst)
	ctx, cancel := opCtx()
	defer cancel()
	if _, err := rt.c.Put(ctx, k+"/data", string(data)); err != nil {
		return err
	}
	if _, err := rt.c.Put(ctx, k, fmt.Sprintf("%d:%d:%d", rt.rank, dst, len(data))); err != nil {
		return err
	}
	return rt.awaitAck(k+"/ack", "Timeout waiting for char data acknowledgment from rank %d", dst)
}

func (rt *etcdRT) awaitAck(ack, timeoutMsg string, peer int) error {
	for i := 0; i < rt.tries; i++ {
		ctx, cancel := opCtx()
		resp, err := rt.c.Get(ctx, ack)
		if err == nil && len(resp.Kvs) > 0 {
			_, err = rt.c.Delete(ctx, ack)
			cancel()
			return err
		}
		cancel()
		time.Sleep(rt.poll)
	}
	fmt.Fprintf(os.Stderr, timeoutMsg+"\n", peer)
	return errors.New("ack timeout")
}

// recv polls the message key, acks, sleeps 1 s (or the poll interval if
// shorter) and deletes the message — only if it was not replaced meanwhile.
func (rt *etcdRT) recv(kind string, src int, timeoutMsg string) (string, []byte, error) {
	k := rt.msgKey(kind, src, rt.rank)
	for i := 0; i < rt.tries; i++ {
		ctx, cancel := opCtx()
		resp, err := rt.c.Get(ctx, k)
		if err != nil || len(resp.Kvs) == 0 {
			cancel()
			time.Sleep(rt.poll)
			continue
		}
		kv := resp.Kvs[0]
		var data []byte
		if kind == "char_data" {
			d, err := rt.c.Get(ctx, k+"/data")
			if err != nil || len(d.Kvs) == 0 {
				cancel()
				return "", nil, fmt.Errorf("char data missing for %s", k)
			}
			data = d.Kvs[0].Value
		}
		if _, err := rt.c.Put(ctx, k+"/ack", "received"); err != nil {
			cancel()
			return "", nil, err
		}
		time.Sleep(min(time.Second, rt.poll))
		rt.deleteIfUnchanged(ctx, k, kv.ModRevision, kind == "char_data")
		cancel()
		return string(kv.Value), data, nil
	}
	fmt.Fprintf(os.Stderr, timeoutMsg+"\n", src)
	return "", nil, errors.New("receive timeout")
}

func (rt *etcdRT) deleteIfUnchanged(ctx context.Context, k string, rev int64, withData bool) {
	ops := []clientv3.Op{clientv3.OpDelete(k)}
	if withData {
		ops = append(ops, clientv3.OpDelete(k+"/data"))
	}
	_, _ = rt.c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", rev)).Then(ops...).Commit()
}

func (rt *etcdRT) recvInt(src int) (int, error) {
	v, _, err := rt.recv("int_data", src, "Timeout waiting for int data from rank %d")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

func (rt *etcdRT) recvChar(src int) ([]byte, error) {
	_, data, err := rt.recv("char_data", src, "Timeout waiting for char data from rank %d")
	return data, err
}

// cleanup is the destructor (~xferBenchEtcdRT, cleanupForExit): stop
// keeping the rank's lease alive and delete "<prefix>/" (rmdir of
// makeKey("")). As the real tool, it does not revoke the lease: it
// expires 30 s later, unless whoever runs the tool revokes it.
func (rt *etcdRT) cleanup() {
	ctx, cancel := opCtx()
	defer cancel()
	if rt.stop != nil {
		rt.stop()
	}
	_, _ = rt.c.Delete(ctx, rt.prefix+"/", clientv3.WithPrefix())
}

func (rt *etcdRT) getRank() int { return rt.rank }
