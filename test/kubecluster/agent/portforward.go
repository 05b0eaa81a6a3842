package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
		return p.remotePortForward(ctx, port, stream)
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

// remotePortForward is portForward for a pod on a remote machine (host
// network): the stream is the standard input and output of nc on the
// machine, connected to the port on its loopback, as a kubelet there would
// dial it. It ends when either side closes or the client goes away.
func (p *pod) remotePortForward(ctx context.Context, port int32, stream io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	args := append(append([]string{}, p.agent.opts.Remote.Shell...), fmt.Sprintf("exec nc 127.0.0.1 %d", port))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout = stream, stream
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second // the stream's reader may block: do not wait on it for ever
	err := cmd.Run()
	var exit *exec.ExitError
	// Only nc's own failure (nothing listening) is an error: a copy that
	// failed is the client having gone, which ends a forward normally.
	if errors.As(err, &exit) && ctx.Err() == nil {
		return fmt.Errorf("port-forward to pod %s/%s port %d on %s: %v: %s", p.spec.Namespace, p.spec.Name, port, p.agent.opts.Name, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
