// Package local is the backend whose endpoints are processes on this host:
// one RDMA host looping back between its NICs, or a TCP-only machine for
// the UCX-over-TCP and iperf3 tests. Every command runs in its own process
// group so that a kill reaches the tool's children too.
package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// DefaultGrace is how long Kill waits after SIGTERM before SIGKILL.
const DefaultGrace = 500 * time.Millisecond

// Backend runs endpoints as local processes. The zero value is not usable;
// call New.
type Backend struct {
	// Grace between SIGTERM and SIGKILL when killing a process group.
	Grace time.Duration

	mu    sync.Mutex
	procs map[*process]struct{}
}

// The contract (runner/backend) and the capabilities this backend has.
var (
	_ backend.Backend       = (*Backend)(nil)
	_ backend.StdinExecer   = (*Backend)(nil)
	_ backend.LineRater     = (*Backend)(nil)
	_ backend.RDMAChecker   = (*Backend)(nil)
	_ backend.Fingerprinter = (*Backend)(nil)
	_ backend.HostSharer    = (*Backend)(nil)
)

// New returns a local backend with the default kill grace.
func New() *Backend {
	return &Backend{Grace: DefaultGrace, procs: map[*process]struct{}{}}
}

// Name is "local".
func (b *Backend) Name() string { return "local" }

// SharesHost is true: every endpoint is a process of this host.
func (b *Backend) SharesHost() bool { return true }

// Provision gives every endpoint the loopback address unless the scenario
// set one (a local NIC's address for RDMA loopback between two ports).
func (b *Backend) Provision(ctx context.Context, eps []endpoint.Endpoint) ([]endpoint.Endpoint, error) {
	out := make([]endpoint.Endpoint, len(eps))
	var inv *nic.Inventory // read once, for the first endpoint with GPUs and a NIC
	for i, ep := range eps {
		if ep.Address == "" {
			ep.Address = "127.0.0.1"
		}
		if ep.Host == "" {
			ep.Host, _ = os.Hostname()
		}
		if ep.GPUs > 0 && ep.Device != "" {
			if inv == nil {
				// Without a readable matrix (no nvidia-smi, or it failed)
				// the pairs stay unknown and expect.affinity says "not judged".
				if inv, _ = nic.Discover(nic.Options{Root: SysRoot}); inv == nil {
					inv = &nic.Inventory{}
				}
			}
			ep.Affinity = affinityOf(inv, ep)
		}
		out[i] = ep
	}
	return out, ctx.Err()
}

// affinityOf is the PCIe relation of each GPU the endpoint uses (its own,
// by CUDA_VISIBLE_DEVICES) to its named RDMA device, from this host's
// `nvidia-smi topo -m`.
func affinityOf(inv *nic.Inventory, ep endpoint.Endpoint) []endpoint.GPUNIC {
	var out []endpoint.GPUNIC
	for _, p := range inv.AffinityOf(ep.OwnGPUs(), []string{ep.Device}) {
		out = append(out, endpoint.GPUNIC(p))
	}
	return out
}

// Start starts cmd in a new process group with the endpoint's and the
// command's environment on top of this process's.
func (b *Backend) Start(ctx context.Context, ep endpoint.Endpoint, cmd backend.Command) (backend.Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(cmd.Argv) == 0 {
		return nil, fmt.Errorf("%s: empty command", ep.Name)
	}
	path, err := lookPath(cmd.Argv[0], cmd.Env, ep.Env)
	if err != nil {
		return nil, &backend.MissingBinaryError{Binary: cmd.Argv[0], Endpoint: ep.Name, Err: err}
	}
	c := exec.Command(path, cmd.Argv[1:]...)
	c.Args[0] = cmd.Argv[0]
	c.Env = mergeEnv(os.Environ(), ep.Env, cmd.Env)
	c.Stdout, c.Stderr = cmd.Stdout, cmd.Stderr
	c.SysProcAttr = sysProcAttr()
	// A grandchild that keeps the output pipe open must not hang Wait.
	c.WaitDelay = 2 * time.Second
	p := &process{b: b, cmd: c, done: make(chan struct{})}
	start := c.Start
	if ep.CPUSet != "" {
		start = func() error { return startPinned(c, ep.CPUSet) }
	}
	if err := start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", ep.Name, cmd.Argv[0], err)
	}
	p.start = time.Now()
	b.track(p)
	go p.reap()
	return p, nil
}

// lookPath resolves argv[0] against the PATH the process will see.
func lookPath(name string, envs ...map[string]string) (string, error) {
	if strings.Contains(name, "/") {
		if _, err := os.Stat(name); err != nil {
			return "", err
		}
		return name, nil
	}
	for _, env := range envs {
		if p, ok := env["PATH"]; ok {
			return lookIn(name, p)
		}
	}
	return exec.LookPath(name)
}

func lookIn(name, pathList string) (string, error) {
	for _, dir := range strings.Split(pathList, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// mergeEnv overlays maps on a KEY=VALUE list, later ones winning.
func mergeEnv(base []string, overlays ...map[string]string) []string {
	idx := map[string]int{}
	out := append([]string(nil), base...)
	for i, kv := range out {
		if k, _, ok := strings.Cut(kv, "="); ok {
			idx[k] = i
		}
	}
	for _, m := range overlays {
		for k, v := range m {
			if i, ok := idx[k]; ok {
				out[i] = k + "=" + v
				continue
			}
			idx[k] = len(out)
			out = append(out, k+"="+v)
		}
	}
	return out
}

// Exec runs a short command and returns its stdout. Reads of /proc files
// (the listen table for readiness) are served directly: no fork per poll.
func (b *Backend) Exec(ctx context.Context, ep endpoint.Endpoint, argv []string) ([]byte, error) {
	if out, ok, err := readProcFiles(argv); ok {
		return out, err
	}
	return b.ExecStdin(ctx, ep, argv, nil)
}

// ExecStdin is Exec with stdin fed to the command (backend.StdinExecer).
func (b *Backend) ExecStdin(ctx context.Context, ep endpoint.Endpoint, argv []string, stdin []byte) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = mergeEnv(os.Environ(), ep.Env)
	c.SysProcAttr = sysProcAttr()
	// Past ctx, the whole process group: a script's children (a hung
	// ucx_info under `sh -c`) must not outlive it.
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	out, err := c.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(bytes.TrimSpace(ee.Stderr)) > 0 {
			return out, fmt.Errorf("%s: %s: %w: %s", ep.Name, remote.Brief(argv), err, bytes.TrimSpace(ee.Stderr))
		}
		return out, fmt.Errorf("%s: %s: %w", ep.Name, remote.Brief(argv), err)
	}
	return out, nil
}

// readProcFiles handles `cat /proc/...` without a child process.
func readProcFiles(argv []string) ([]byte, bool, error) {
	if len(argv) < 2 || argv[0] != "cat" {
		return nil, false, nil
	}
	var out []byte
	for _, p := range argv[1:] {
		if !strings.HasPrefix(p, "/proc/") {
			return nil, false, nil
		}
	}
	for _, p := range argv[1:] {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, true, err
		}
		out = append(out, data...)
	}
	return out, true, nil
}

// Cleanup kills every process group still running.
func (b *Backend) Cleanup(ctx context.Context) error {
	b.mu.Lock()
	ps := make([]*process, 0, len(b.procs))
	for p := range b.procs {
		ps = append(ps, p)
	}
	b.mu.Unlock()
	var errs []error
	for _, p := range ps {
		if err := p.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Running returns the pids of the process groups still tracked (tests).
func (b *Backend) Running() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var pids []int
	for p := range b.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}

func (b *Backend) track(p *process) {
	b.mu.Lock()
	b.procs[p] = struct{}{}
	b.mu.Unlock()
}

func (b *Backend) untrack(p *process) {
	b.mu.Lock()
	delete(b.procs, p)
	b.mu.Unlock()
}
