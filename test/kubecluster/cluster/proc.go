package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one control-plane binary the cluster started: its command
// line (kept so it can be restarted), log file and pid.
type process struct {
	name string
	path string
	args []string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs the process with its output appended to its log file.
func (p *process) start() error {
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group, and killed with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return nil
}

// exited says whether the process has ended.
func (p *process) exited() bool {
	if p.done == nil {
		return true
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process by its pid: SIGTERM, up to grace, then SIGKILL
// (bounded too).
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL", p.name, pid)
	}
}

// tail is the end of the process's log, for error messages.
func (p *process) tail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return fmt.Sprintf("--- %s (%s) ---\n%s", p.name, filepath.Base(p.log), b)
}
