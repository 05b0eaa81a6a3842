package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	utilexec "k8s.io/utils/exec"
)

// findContainer returns a pod's container by name (the first one when
// name is empty, as kubectl does).
func (p *pod) findContainer(name string) (*container, error) {
	for _, c := range append(append([]*container{}, p.containers...), p.inits...) {
		if name == "" || c.spec.Name == name {
			return c, nil
		}
	}
	return nil, errdefs.NotFoundf("container %q not found in pod %s/%s", name, p.spec.Namespace, p.spec.Name)
}

// exec runs cmd in the pod's network namespace with the container's
// environment, wiring the streams; a non-zero exit comes back as a
// utilexec.CodeExitError, which the kubelet API turns into the exit code
// the client sees.
func (p *pod) exec(ctx context.Context, containerName string, argv []string, attach api.AttachIO) error {
	c, err := p.findContainer(containerName)
	if err != nil {
		return err
	}
	p.mu.Lock()
	running := c.state.Running != nil && p.net != nil && !p.deleting
	p.mu.Unlock()
	if !running {
		return errdefs.InvalidInputf("container %q in pod %s/%s is not running", c.spec.Name, p.spec.Namespace, p.spec.Name)
	}
	if len(argv) == 0 {
		return errdefs.InvalidInput("no command")
	}
	cmd := p.command(c, argv)
	if w := attach.Stdout(); w != nil {
		cmd.Stdout = w
	}
	if w := attach.Stderr(); w != nil {
		cmd.Stderr = w
	}
	var stdin io.WriteCloser
	if attach.Stdin() != nil {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return err
		}
	}
	p.mu.Lock()
	if p.deleting {
		p.mu.Unlock()
		return errdefs.InvalidInput("pod is being deleted")
	}
	err = cmd.Start()
	if err == nil {
		if p.pgids == nil {
			p.pgids = map[int]bool{}
		}
		p.pgids[cmd.Process.Pid] = true
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if stdin != nil {
		// Not waited for: the client may never close its stdin.
		go func() {
			_, _ = io.Copy(stdin, attach.Stdin())
			stdin.Close()
		}()
	}
	err = cmd.Wait()
	if st := cmd.ProcessState; st != nil && st.ExitCode() != 0 {
		code := st.ExitCode()
		if code < 0 { // killed by a signal
			code = 137
		}
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	if err != nil && cmd.ProcessState == nil {
		return err
	}
	return nil
}

// logs returns a container's log (the previous instance's with previous),
// trimmed to tail lines and limitBytes, following it while the container
// runs when follow is set.
func (p *pod) logs(ctx context.Context, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	c, err := p.findContainer(containerName)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	n := c.restarts
	p.mu.Unlock()
	if opts.Previous {
		if n == 0 {
			return nil, errdefs.InvalidInputf("previous terminated container %q in pod %q not found", c.spec.Name, p.spec.Name)
		}
		n--
	}
	b, err := os.ReadFile(c.logPath(n))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if opts.Tail > 0 {
		b = tailLines(b, opts.Tail)
	}
	if opts.LimitBytes > 0 && len(b) > opts.LimitBytes {
		b = b[:opts.LimitBytes]
	}
	if !opts.Follow || opts.Previous {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	pr, pw := io.Pipe()
	go p.follow(ctx, c, n, int64(len(b)), b, pw)
	return pr, nil
}

// follow writes what is already there, then new output as it is written,
// until the container instance stops or the client goes away.
func (p *pod) follow(ctx context.Context, c *container, n int32, off int64, first []byte, pw *io.PipeWriter) {
	if _, err := pw.Write(first); err != nil {
		return
	}
	path := c.logPath(n)
	for ctx.Err() == nil {
		p.mu.Lock()
		alive := c.restarts == n && c.state.Running != nil
		p.mu.Unlock()
		f, err := os.Open(path)
		if err == nil {
			_, _ = f.Seek(off, io.SeekStart)
			w, _ := io.Copy(pw, f)
			off += w
			f.Close()
		}
		if !alive {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	pw.Close()
}

func tailLines(b []byte, n int) []byte {
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return []byte(strings.Join(lines, ""))
}
