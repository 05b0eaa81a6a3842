package agent

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"golang.org/x/sys/unix"
)

// portForward serves one port-forward stream: it dials port on the pod's
// loopback inside the pod's network namespace (the host's for a
// hostNetwork pod) and copies both ways until either side closes or the
// client goes away, as a kubelet's port-forward does.
func (p *pod) portForward(ctx context.Context, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	p.mu.Lock()
	pn, deleting := p.net, p.deleting
	p.mu.Unlock()
	if pn == nil || deleting {
		return errdefs.InvalidInputf("pod %s/%s is not running", p.spec.Namespace, p.spec.Name)
	}
	if p.agent.opts.Remote != nil {
		return errdefs.InvalidInputf("pod %s/%s runs on %s, a remote machine: port-forward is not supported there", p.spec.Namespace, p.spec.Name, p.agent.opts.Name)
	}
	conn, err := dialInNetNS(pn.NetNS, fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port-forward to pod %s/%s port %d: %w", p.spec.Namespace, p.spec.Name, port, err)
	}
	defer conn.Close()
	var once sync.Once
	done := make(chan struct{})
	finish := func() { once.Do(func() { close(done) }) }
	go func() {
		_, _ = io.Copy(conn, stream)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // the client's EOF reaches the pod
		} else {
			finish()
		}
	}()
	go func() {
		_, _ = io.Copy(stream, conn)
		finish()
	}()
	select {
	case <-done:
	case <-ctx.Done():
	case <-p.ctx.Done():
	}
	return nil
}

// dialInNetNS connects to addr from inside the named network namespace
// ("" is the host's): an OS thread of its own enters the namespace, creates
// and connects the socket (which stays in that namespace), and goes back.
// A thread that cannot go back is not reused: it ends with its goroutine.
func dialInNetNS(netns, addr string) (net.Conn, error) {
	const timeout = 10 * time.Second
	if netns == "" {
		return net.DialTimeout("tcp", addr, timeout)
	}
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join("/run/netns", netns))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns %s: %w", netns, err)}
			return
		}
		conn, err := net.DialTimeout("tcp", addr, timeout)
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{conn, err}
	}()
	r := <-ch
	return r.conn, r.err
}
