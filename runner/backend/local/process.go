package local

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
)

// process is one started command and its process group.
type process struct {
	b     *Backend
	cmd   *exec.Cmd
	start time.Time

	done     chan struct{}
	exit     backend.Exit
	waitErr  error
	killOnce sync.Once
	killErr  error
}

// reap waits for the leader, records how it ended, then kills whatever is
// left of its group (children that outlived their parent).
func (p *process) reap() {
	err := p.cmd.Wait()
	p.exit.Elapsed = time.Since(p.start)
	p.exit.Code = -1
	if st := p.cmd.ProcessState; st != nil {
		p.exit.Code = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.exit.Signaled = true
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		p.waitErr = err
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	close(p.done)
	p.b.untrack(p)
}

// Wait returns when the process exits, or kills it when ctx ends first.
func (p *process) Wait(ctx context.Context) (backend.Exit, error) {
	select {
	case <-p.done:
		return p.exit, p.waitErr
	case <-ctx.Done():
		_ = p.Kill()
		return p.exit, ctx.Err()
	}
}

// Kill sends SIGTERM to the whole group, then SIGKILL after the grace, and
// returns once the leader has been reaped.
func (p *process) Kill() error {
	p.killOnce.Do(func() { p.killErr = p.kill() })
	return p.killErr
}

func (p *process) kill() error {
	pgid := p.cmd.Process.Pid
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	grace := p.b.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("process did not exit after SIGKILL")
	}
}

// Pid is the leader's pid (= the process group id).
func (p *process) Pid() int { return p.cmd.Process.Pid }
