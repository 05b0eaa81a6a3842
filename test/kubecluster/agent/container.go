package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultPath is the PATH of a container whose spec sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// container is one container of a pod: its spec and the state a kubelet
// would report for it. Fields are guarded by the pod's mutex.
type container struct {
	spec     corev1.Container
	state    corev1.ContainerState
	last     corev1.ContainerState
	restarts int32
	pid      int
	logDir   string
}

// argv is what the container runs: command + args; without either (no
// image entrypoint to fall back on) it sleeps until the pod is deleted.
func (c *container) argv() []string {
	argv := append(append([]string{}, c.spec.Command...), c.spec.Args...)
	if len(argv) == 0 {
		return []string{"sleep", "infinity"}
	}
	return argv
}

// env is the process environment: a kubelet-like base, then the spec's
// variables in order, valueFrom.fieldRef resolved here (the downward API:
// status.podIP is only known once the pod's network is up, so the agent
// asks virtual-kubelet not to resolve it), $(VAR) references expanded as
// a kubelet does; then NVIDIA_VISIBLE_DEVICES for a container given GPUs,
// and Options.ExtraBinDir first on PATH.
func (p *pod) env(c *container) []string {
	p.mu.Lock()
	ip := p.podIP()
	rooted := p.root != nil && p.root.roots[c.spec.Name] != ""
	p.mu.Unlock()
	vars := map[string]string{"PATH": defaultPath, "HOME": "/root", "HOSTNAME": p.spec.Name}
	order := []string{"PATH", "HOME", "HOSTNAME"}
	set := func(k, v string) {
		if _, seen := vars[k]; !seen {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, e := range c.spec.Env {
		v := expandEnv(e.Value, vars)
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			v = p.fieldValue(e.ValueFrom.FieldRef.FieldPath, ip)
		}
		set(e.Name, v)
	}
	if ids := p.gpuIndexes(c); ids != "" && rooted {
		if _, ok := vars["NVIDIA_VISIBLE_DEVICES"]; !ok {
			set("NVIDIA_VISIBLE_DEVICES", ids)
		}
	}
	if x := p.agent.extraBin(c.spec.Image); x != "" {
		if rooted {
			x = ExtraBinMount
		}
		vars["PATH"] = x + ":" + vars["PATH"]
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vars[k])
	}
	return out
}

// fieldValue is a downward-API field of the pod ("" for one it does not
// know).
func (p *pod) fieldValue(path, ip string) string {
	switch path {
	case "status.podIP":
		return ip
	case "status.hostIP":
		return p.agent.hostIP()
	case "metadata.name":
		return p.spec.Name
	case "metadata.namespace":
		return p.spec.Namespace
	case "metadata.uid":
		return string(p.spec.UID)
	case "spec.nodeName":
		return p.agent.opts.Name
	case "spec.serviceAccountName":
		return p.spec.Spec.ServiceAccountName
	}
	return ""
}

// expandEnv expands $(VAR) from vars as a kubelet does; $$(VAR) escapes,
// and an unknown $(VAR) stays as written.
func expandEnv(s string, vars map[string]string) string {
	if !strings.Contains(s, "$(") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '(' {
			if j := strings.IndexByte(s[i:], ')'); j > 0 {
				if v, ok := vars[s[i+2:i+j]]; ok {
					b.WriteString(v)
					i += j
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// command builds the process: in the pod's root file system when it has
// one (nsenter into its mount and network namespaces, chroot), else
// `ip netns exec NETNS argv...` on the host's; in its own process group,
// killed if the agent's thread dies.
func (p *pod) command(c *container, argv []string) *exec.Cmd {
	var cmd *exec.Cmd
	if p.agent.opts.Remote != nil {
		cmd = p.remoteCommand(c, argv)
	} else {
		args := p.wrap(c, argv)
		cmd = exec.Command(args[0], args[1:]...)
		cmd.Env = p.env(c)
		if c.spec.WorkingDir != "" && !p.hasRoot(c) {
			cmd.Dir = c.spec.WorkingDir
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A daemonised child may keep stdout open; do not wait for it.
	cmd.WaitDelay = time.Second
	return cmd
}

func (c *container) logPath(restart int32) string {
	return filepath.Join(c.logDir, fmt.Sprintf("%d.log", restart))
}

// run is the container's restart loop, a kubelet's in miniature: start,
// wait, record the exit, and restart while restart(exitCode) says so, with
// an exponential back-off (CrashLoopBackOff while waiting). It returns the
// last exit code.
func (p *pod) run(ctx context.Context, c *container, restart func(int32) bool) int32 {
	backoff := p.agent.opts.BackoffBase
	for {
		started := time.Now()
		code, reason, msg := p.runOnce(ctx, c)
		p.mu.Lock()
		c.pid = 0
		c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: msg,
			StartedAt: metav1.NewTime(started), FinishedAt: metav1.Now(),
		}}
		again := ctx.Err() == nil && restart(code)
		if again {
			if time.Since(started) > 2*p.agent.opts.BackoffMax {
				backoff = p.agent.opts.BackoffBase
			}
			c.last = c.state
			c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
					backoff, c.spec.Name, p.spec.Name, p.spec.Namespace, p.spec.UID),
			}}
		}
		p.mu.Unlock()
		p.notify()
		if !again {
			return code
		}
		p.event(corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)",
			c.spec.Name, p.spec.Name, p.spec.Namespace, p.spec.UID)
		select {
		case <-ctx.Done():
			return code
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, p.agent.opts.BackoffMax)
		p.mu.Lock()
		c.restarts++
		p.mu.Unlock()
	}
}

// runInits runs the init containers in order, each to success (retried
// unless restartPolicy is Never); false means the pod cannot start.
func (p *pod) runInits(ctx context.Context) bool {
	never := p.spec.Spec.RestartPolicy == corev1.RestartPolicyNever
	for _, c := range p.inits {
		if p.run(ctx, c, func(code int32) bool { return code != 0 && !never }) != 0 {
			p.mu.Lock()
			p.initFailed = true
			p.mu.Unlock()
			p.notify()
			return false
		}
	}
	return ctx.Err() == nil
}

func shouldRestart(policy corev1.RestartPolicy, code int32) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0
	default:
		return true
	}
}

// runOnce starts the container's process, reports it running and waits
// for it; it returns the exit code, the kubelet's reason and a message.
func (p *pod) runOnce(ctx context.Context, c *container) (int32, string, string) {
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return 128, "StartError", err.Error()
	}
	p.mu.Lock()
	restart := c.restarts
	p.mu.Unlock()
	logf, err := os.Create(c.logPath(restart))
	if err != nil {
		return 128, "StartError", err.Error()
	}
	defer logf.Close()
	cmd := p.command(c, c.argv())
	cmd.Stdout, cmd.Stderr = logf, logf
	// Start under the lock: once terminate has set deleting, no new
	// process can appear in the namespace it is about to empty.
	p.mu.Lock()
	if p.deleting {
		p.mu.Unlock()
		return 137, "Error", "pod deleted"
	}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return 128, "StartError", err.Error()
	}
	if p.pgids == nil {
		p.pgids = map[int]bool{}
	}
	p.pgids[cmd.Process.Pid] = true
	c.pid = cmd.Process.Pid
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	p.mu.Unlock()
	p.event(corev1.EventTypeNormal, "Started", "Started container %s", c.spec.Name)
	p.notify()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		// The pod is being deleted: its termination kills the process.
		werr = <-done
	}
	return exitStatus(cmd, werr)
}

// exitStatus maps a finished process to a kubelet's terminated state.
func exitStatus(cmd *exec.Cmd, err error) (int32, string, string) {
	st := cmd.ProcessState
	if st == nil {
		return 128, "StartError", fmt.Sprint(err)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal()), "Error", ws.Signal().String()
	}
	if st.ExitCode() == 0 {
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
			return 0, "Completed", err.Error()
		}
		return 0, "Completed", ""
	}
	return int32(st.ExitCode()), "Error", ""
}
