package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Remote makes a node of another machine (a soft-RoCE VM of the RDMA lane)
// that the agent reaches with a command, such as ssh. The agent still
// serves the node's kubelet API here; each container process and each
// exec'd command runs on the machine through Shell, in its host network
// (hostNetwork pods only: the machine's own RDMA device and address are
// what the tests measure) and on its own file system (images are not
// unpacked there). Every process started for a pod carries the variable
// PodMarker=UID, so that the pod's processes are found there, and killed,
// as a cgroup would let a kubelet find them.
type Remote struct {
	// Shell runs one shell command line on the machine: the line is
	// appended as the last argument, e.g. ssh -p PORT root@HOST.
	Shell []string
	// HostIP is the machine's address on the data network: the IP of
	// its hostNetwork pods (status.podIP and status.hostIP).
	HostIP string
}

// PodMarker names the variable that tags a pod's processes on a remote node.
const PodMarker = "KUBECLUSTER_POD"

// hostIP is the address of the node's hostNetwork pods.
func (a *Agent) hostIP() string {
	if r := a.opts.Remote; r != nil {
		return r.HostIP
	}
	return a.opts.NodeIP
}

// remoteArgv is the command that runs argv on the remote node with env
// (and nothing of the shell's own: a container does not inherit ssh's
// session, nor, with sh -c, this process's environment), in dir, tagged
// with the pod's marker.
func (p *pod) remoteArgv(env []string, dir string, argv []string) []string {
	var b strings.Builder
	if dir != "" {
		b.WriteString("cd " + shellQuote(dir) + " && ")
	}
	b.WriteString("exec env -i")
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") && p.agent.opts.ExtraBinDir != "" {
			// The stand-ins' folder is this host's; the machine has its own tools.
			kv = strings.Replace(kv, p.agent.opts.ExtraBinDir+":", "", 1)
		}
		b.WriteString(" " + shellQuote(kv))
	}
	b.WriteString(" " + shellQuote(PodMarker+"="+string(p.spec.UID)))
	for _, a := range argv {
		b.WriteString(" " + shellQuote(a))
	}
	return append(append([]string{}, p.agent.opts.Remote.Shell...), b.String())
}

// remoteCommand is p.command for a remote node.
func (p *pod) remoteCommand(c *container, argv []string) *exec.Cmd {
	args := p.remoteArgv(p.env(c), c.spec.WorkingDir, argv)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = os.Environ() // the shell's (ssh's) own; the pod's travel in the line
	return cmd
}

// remoteKillScript signals every process of the pod on the machine: TERM,
// up to grace, then KILL until none is left (at most 10 s), and prints how
// many survived, and nothing else on stdout. The script's own shell carries
// no marker. A process that ends during a scan (or whose environ cannot be
// read) makes the shell itself complain about the redirection: that goes
// nowhere, as it would otherwise bury the count.
func remoteKillScript(uid string, grace time.Duration) string {
	return fmt.Sprintf(`m=%s
pids() { for d in /proc/[0-9]*; do { tr '\0' '\n' < "$d/environ"; } 2>/dev/null | grep -qxF "$m" && echo "${d#/proc/}"; done; }
n=0; for p in $(pids); do kill -TERM "$p" 2>/dev/null; done
while [ -n "$(pids)" ] && [ $n -lt %d ]; do sleep 0.1; n=$((n+1)); done
n=0; while [ -n "$(pids)" ] && [ $n -lt 100 ]; do for p in $(pids); do kill -KILL "$p" 2>/dev/null; done; sleep 0.1; n=$((n+1)); done
pids | wc -l`, shellQuote(PodMarker+"="+uid), int(grace/(100*time.Millisecond)))
}

// killRemote ends the pod's processes on its machine.
func (p *pod) killRemote(grace time.Duration) error {
	r := p.agent.opts.Remote
	ctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	args := append(append([]string{}, r.Shell...), remoteKillScript(string(p.spec.UID), grace))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr // the shell's (ssh's) warnings: not the count
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("killing pod %s/%s's processes on %s: %v: %s", p.spec.Namespace, p.spec.Name, p.agent.opts.Name, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	n, err := strconv.Atoi(strings.TrimSpace(lines[len(lines)-1]))
	switch {
	case err != nil:
		return fmt.Errorf("killing pod %s/%s's processes on %s: no count of the survivors in %q (%s)", p.spec.Namespace, p.spec.Name, p.agent.opts.Name, out, stderr.String())
	case n > 0:
		return fmt.Errorf("pod %s/%s: %d process(es) survived SIGKILL on %s", p.spec.Namespace, p.spec.Name, n, p.agent.opts.Name)
	}
	return nil
}

// RemoteProcess is a pod's process on a remote machine.
type RemoteProcess struct {
	PodUID  string
	Cmdline string
}

// RemoteProcesses lists every pod process left on a remote machine (any
// pod of any cluster), through shell.
func RemoteProcesses(ctx context.Context, shell []string) ([]RemoteProcess, error) {
	script := `for d in /proc/[0-9]*; do u=$(tr '\0' '\n' < "$d/environ" 2>/dev/null | sed -n 's/^` + PodMarker + `=//p'); ` +
		`[ -n "$u" ] && echo "$u $(tr '\0' ' ' < "$d/cmdline")"; done; true`
	out, err := exec.CommandContext(ctx, shell[0], append(shell[1:], script)...).Output()
	if err != nil {
		return nil, err
	}
	var procs []RemoteProcess
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if uid, cmd, ok := strings.Cut(strings.TrimSpace(l), " "); ok {
			procs = append(procs, RemoteProcess{PodUID: uid, Cmdline: strings.TrimSpace(cmd)})
		}
	}
	return procs, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
