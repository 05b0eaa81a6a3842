package nixlnative

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// leaseTTL is the Python probe's Lease.TTL: a killed side's key expires
// this long after its keep-alives stop.
const leaseTTL = 10

// peerInfo is what each side publishes at KEY/ROLE (the Python probe's
// publish()): its agent's metadata (base64), regions, device and segment;
// or {"failed": why}.
type peerInfo struct {
	Name     string    `json:"name,omitempty"`
	Metadata []byte    `json:"metadata,omitempty"` // base64 in JSON, as the Python side writes it
	Regions  []uintptr `json:"regions,omitempty"`
	Device   int       `json:"device"`
	Seg      string    `json:"seg,omitempty"`
	Capacity int64     `json:"capacity,omitempty"`
	Failed   string    `json:"failed,omitempty"`
}

// rendezvous is the initiator's side of the pair's keys in rdmabench's etcd.
type rendezvous struct {
	url, key string
	cli      *clientv3.Client
	lease    clientv3.LeaseID
	stopKeep context.CancelFunc
}

func dialEtcd(endpoint, key string) (*rendezvous, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("etcd %q is not a URL like http://10.0.0.5:2379", endpoint)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("etcd %s cannot be reached: %w", endpoint, err)
	}
	_ = conn.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", endpoint, err)
	}
	return &rendezvous{url: endpoint, key: key, cli: cli}, nil
}

// wait reads KEY/role once it exists, within deadline; a peer that says it
// failed is an error.
func (r *rendezvous) wait(ctx context.Context, role string, deadline time.Time) (*peerInfo, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	last := "the key was not there"
	for {
		resp, err := r.cli.Get(ctx, r.key+"/"+role)
		if err != nil {
			last = fmt.Sprintf("etcd at %s: %v", r.url, err)
		} else if len(resp.Kvs) > 0 {
			var p peerInfo
			if err := json.Unmarshal(resp.Kvs[0].Value, &p); err != nil {
				return nil, fmt.Errorf("%s/%s does not hold the %s's agent metadata: %w", r.key, role, role, err)
			}
			if p.Failed != "" {
				return nil, fmt.Errorf("the %s failed: %s", role, p.Failed)
			}
			return &p, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waited for the %s's agent metadata at %s/%s: %s", role, r.key, role, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// publish puts this side's info at KEY/role under a lease kept alive
// until close (revoked) or the process's end (expired after leaseTTL).
func (r *rendezvous) publish(ctx context.Context, role string, p *peerInfo) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if r.lease == 0 {
		l, err := r.cli.Grant(ctx, leaseTTL)
		if err != nil {
			return fmt.Errorf("etcd at %s: lease grant: %w", r.url, err)
		}
		r.lease = l.ID
		keepCtx, stop := context.WithCancel(context.Background())
		ch, err := r.cli.KeepAlive(keepCtx, l.ID)
		if err != nil {
			stop()
			return fmt.Errorf("etcd at %s: keep-alive: %w", r.url, err)
		}
		r.stopKeep = stop
		go func() {
			for range ch { // the client renews; its answers are drained
			}
		}()
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := r.cli.Put(ctx, r.key+"/"+role, string(b), clientv3.WithLease(r.lease)); err != nil {
		return fmt.Errorf("etcd at %s: put %s/%s: %w", r.url, r.key, role, err)
	}
	return nil
}

// gone waits until KEY/role is deleted, within d; etcd errors count as not
// yet.
func (r *rendezvous) gone(ctx context.Context, role string, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		if resp, err := r.cli.Get(ctx, r.key+"/"+role); err == nil && len(resp.Kvs) == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ended says why the peer will send no more, or "": its key gone (its
// lease revoked or expired: killed) or saying it failed. etcd slow or
// gone is not the peer's word.
func (r *rendezvous) ended(ctx context.Context, role string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := r.cli.Get(ctx, r.key+"/"+role)
	if err != nil {
		return ""
	}
	if len(resp.Kvs) == 0 {
		return fmt.Sprintf("its key %s/%s is gone", r.key, role)
	}
	var p peerInfo
	if json.Unmarshal(resp.Kvs[0].Value, &p) == nil {
		return p.Failed
	}
	return ""
}

// sayFailed puts why at KEY/role, under this side's lease (or one of its
// own) left to expire: the target reads it, then the key goes.
func (r *rendezvous) sayFailed(role, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease := r.lease
	if lease == 0 {
		l, err := r.cli.Grant(ctx, leaseTTL)
		if err != nil {
			return
		}
		lease = l.ID
	}
	b, _ := json.Marshal(peerInfo{Failed: why})
	_, _ = r.cli.Put(ctx, r.key+"/"+role, string(b), clientv3.WithLease(lease))
	if r.stopKeep != nil {
		r.stopKeep()
		r.stopKeep = nil
	}
	r.lease = 0 // expires by itself: not revoked, so that the target reads why
}

// close revokes the lease (deleting this side's key) and closes the client.
func (r *rendezvous) close() {
	if r.stopKeep != nil {
		r.stopKeep()
	}
	if r.lease != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = r.cli.Revoke(ctx, r.lease)
		cancel()
	}
	_ = r.cli.Close()
}
