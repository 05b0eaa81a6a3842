package nccl

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Rendezvous passes rank 0's NCCL unique id to the other ranks through
// rdmabench's etcd: rank 0 writes it under Key with a lease (so a crashed
// probe leaves nothing behind), the others read it; rank 0 revokes the
// lease once the communicator is up, which deletes the key.
type Rendezvous struct {
	Endpoint string
	Key      string
	// Wait bounds how long a rank waits for the id (and for etcd).
	Wait time.Duration

	cli   *clientv3.Client
	lease clientv3.LeaseID
}

func (r *Rendezvous) connect() error {
	if r.cli != nil {
		return nil
	}
	// The client retries an unreachable server until the deadline and then
	// says only "deadline exceeded": a plain connect says why first.
	u, err := url.Parse(r.Endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("etcd %q is not a URL like http://10.0.0.5:2379", r.Endpoint)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return fmt.Errorf("etcd %s cannot be reached: %w", r.Endpoint, err)
	}
	_ = conn.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.Endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("etcd %s: %w", r.Endpoint, err)
	}
	r.cli = cli
	return nil
}

// publish writes the id (rank 0).
func (r *Rendezvous) publish(ctx context.Context, id uniqueID) error {
	if err := r.connect(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Wait)
	defer cancel()
	ttl := int64(r.Wait/time.Second) + 60
	lease, err := r.cli.Grant(ctx, ttl)
	if err != nil {
		return fmt.Errorf("etcd %s: lease for %s: %w", r.Endpoint, r.Key, err)
	}
	r.lease = lease.ID
	if _, err := r.cli.Put(ctx, r.Key, base64.StdEncoding.EncodeToString(id.Internal[:]), clientv3.WithLease(lease.ID)); err != nil {
		return fmt.Errorf("etcd %s: put %s: %w", r.Endpoint, r.Key, err)
	}
	return nil
}

// fetch waits for rank 0's id, polling, within Wait.
func (r *Rendezvous) fetch(ctx context.Context) (uniqueID, error) {
	var id uniqueID
	if err := r.connect(); err != nil {
		return id, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Wait)
	defer cancel()
	var last error
	for {
		resp, err := r.cli.Get(ctx, r.Key)
		if err != nil {
			last = err
		}
		if err == nil && len(resp.Kvs) > 0 {
			b, derr := base64.StdEncoding.DecodeString(string(resp.Kvs[0].Value))
			if derr != nil || len(b) != len(id.Internal) {
				return id, fmt.Errorf("etcd %s: %s does not hold an NCCL unique id (%d bytes)", r.Endpoint, r.Key, len(b))
			}
			copy(id.Internal[:], b)
			return id, nil
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return id, fmt.Errorf("rank 0's NCCL id could not be read at %s in etcd %s within %s: %w", r.Key, r.Endpoint, r.Wait, last)
			}
			return id, fmt.Errorf("rank 0's NCCL id did not appear at %s in etcd %s within %s (is rank 0 running?)", r.Key, r.Endpoint, r.Wait)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// close revokes rank 0's lease (deleting the key) and closes the client.
func (r *Rendezvous) close() {
	if r.cli == nil {
		return
	}
	if r.lease != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = r.cli.Revoke(ctx, r.lease)
		cancel()
		r.lease = 0
	}
	_ = r.cli.Close()
	r.cli = nil
}
