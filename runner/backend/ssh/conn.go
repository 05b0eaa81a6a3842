package ssh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rdmabench/rdmabench/scenarios"
)

// hostConn holds the connections to one host. Sessions are opened on the
// first connection that accepts one; a server that limits sessions per
// connection (OpenSSH MaxSessions) gets another connection.
type hostConn struct {
	host scenarios.Host
	opts Options

	mu      sync.Mutex
	clients []*ssh.Client
}

// client returns a connected client, dialling when there is none.
func (c *hostConn) client(ctx context.Context) (*ssh.Client, error) {
	c.mu.Lock()
	if len(c.clients) > 0 {
		cl := c.clients[0]
		c.mu.Unlock()
		return cl, nil
	}
	c.mu.Unlock()
	return c.dialNew(ctx)
}

func (c *hostConn) dialNew(ctx context.Context) (*ssh.Client, error) {
	cl, err := dial(ctx, c.host, c.opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.clients = append(c.clients, cl)
	c.mu.Unlock()
	return cl, nil
}

// session opens a session, bounded by ctx. A dead connection is dropped
// and dialled again once; a full one gets a sibling.
func (c *hostConn) session(ctx context.Context) (*ssh.Session, error) {
	c.mu.Lock()
	clients := append([]*ssh.Client(nil), c.clients...)
	c.mu.Unlock()
	for _, cl := range clients {
		s, err := newSession(ctx, cl)
		if err == nil {
			return s, nil
		}
		var oce *ssh.OpenChannelError
		if !errors.As(err, &oce) {
			c.drop(cl) // the connection is gone; forget it
		}
		if ctx.Err() != nil {
			return nil, c.errorf("opening a session: %w", ctx.Err())
		}
	}
	cl, err := c.dialNew(ctx)
	if err != nil {
		return nil, err
	}
	s, err := newSession(ctx, cl)
	if err != nil {
		c.drop(cl)
		return nil, c.errorf("opening a session: %w", err)
	}
	return s, nil
}

// newSession is ssh.Client.NewSession bounded by ctx: a host that stopped
// answering must not hang the run.
func newSession(ctx context.Context, cl *ssh.Client) (*ssh.Session, error) {
	type res struct {
		s   *ssh.Session
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := cl.NewSession()
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		cl.Close()
		return nil, ctx.Err()
	}
}

func (c *hostConn) drop(cl *ssh.Client) {
	cl.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.clients {
		if x == cl {
			c.clients = append(c.clients[:i], c.clients[i+1:]...)
			return
		}
	}
}

func (c *hostConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.clients {
		cl.Close()
	}
	c.clients = nil
}

func (c *hostConn) errorf(format string, a ...any) error {
	return fmt.Errorf("ssh %s (%s): %w", c.host.Name, sshAddress(c.host), fmt.Errorf(format, a...))
}

// dial connects and authenticates, each step bounded: the TCP connect by
// DialTimeout (and ctx), the handshake by HandshakeTimeout.
func dial(ctx context.Context, h scenarios.Host, o Options) (*ssh.Client, error) {
	addr := sshAddress(h)
	wrap := func(step string, err error) error {
		return fmt.Errorf("ssh %s (%s): %s: %w", h.Name, addr, step, err)
	}
	cfg, err := clientConfig(h, o)
	if err != nil {
		return nil, wrap("configuration", err)
	}
	dctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	conn, err := (&net.Dialer{KeepAlive: 15 * time.Second}).DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, wrap("connect", err)
	}
	deadline := time.Now().Add(o.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline) // a closed conn fails the handshake anyway
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	stop()
	if err != nil {
		conn.Close()
		return nil, wrap("handshake", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}
