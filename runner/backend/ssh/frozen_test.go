package ssh

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/scenarios"
)

// freezer is a TCP proxy to an ssh server that can stop forwarding while
// keeping the connections open: a host that froze (hung kernel, network
// partition without resets).
type freezer struct {
	ln     net.Listener
	frozen atomic.Bool
	stop   chan struct{}
}

func newFreezer(t *testing.T, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, stop: make(chan struct{})}
	var conns sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		defer conns.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 && f.frozen.Load() {
				<-f.stop
				return
			}
			if n > 0 {
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			conns.Add(2)
			go pipe(s, c)
			go pipe(c, s)
			go func() { <-f.stop; c.Close(); s.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); close(f.stop); conns.Wait() })
	return f
}

// A Wait whose ctx ended kills within one bound, the wait for the
// session's end included: a host that froze with a tool whose process
// group never became known costs one bound, not the kill's and then a
// second for the session that never ends.
func TestWaitOneBoundOnAFrozenHost(t *testing.T) {
	r := newRig(t, nil)
	f := newFreezer(t, r.srv.addr)
	h := r.host
	_, port, _ := net.SplitHostPort(f.ln.Addr().String())
	h.Port, _ = strconv.Atoi(port)
	h.InsecureIgnoreHostKey = true
	b, err := New([]scenarios.Host{h}, Options{DialTimeout: 400 * time.Millisecond, HandshakeTimeout: 2 * time.Second, KillGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The kill of a group never known waits for ctx: bound it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = b.Cleanup(ctx)
	})
	c := b.conn(h.Name)
	sess, err := c.session(ctxT(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// Started without the wrapper: its process group never becomes known.
	p := b.newProcess(c, sess, backend.Command{Argv: []string{"sleep", "30"}, Stdout: io.Discard, Stderr: io.Discard})
	if err := sess.Start("sleep 30"); err != nil {
		t.Fatal(err)
	}
	b.procs.Track(p, true)
	go p.wait()
	time.Sleep(100 * time.Millisecond)
	f.frozen.Store(true)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	exit, err := p.Wait(ctx)
	d := time.Since(start)
	if err == nil || !exit.Signaled {
		t.Errorf("Wait = %+v %v; want a kill error and signaled", exit, err)
	}
	if bound := p.killBound(); d > bound+bound/2 {
		t.Fatalf("Wait took %v after its ctx ended; want about the kill bound %v", d, bound)
	}
}
