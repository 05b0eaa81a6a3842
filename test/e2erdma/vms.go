// Package e2erdma boots the soft-RoCE lane's two QEMU VMs (built by
// `make -C images softroce`) and is the home of the lane's tests: real
// rdma_rxe between two kernels, driven through rdmabench's ssh backend.
package e2erdma

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/scenarios"
)

// Config says where the image is and which host ports the VMs use. The
// ports match scenarios/softroce.yaml.
type Config struct {
	Work       string // the image directory (.work/softroce)
	SSHPorts   [2]int // 127.0.0.1 ports forwarded to each VM's sshd
	SocketPort int    // the QEMU socket network between the VMs
	// KubeletPorts are 127.0.0.1 ports forwarded to each VM's kubelet
	// (10250), for the VMs as Kubernetes nodes (nodes.go).
	KubeletPorts [2]int
	// RailPort is a second socket network between the VMs (10.9.1.0/24,
	// rxe1 on each); 0: none.
	RailPort int
	// RailSwitch joins every data and rail NIC of both VMs on one network
	// segment (a QEMU hub in each VM, the hubs joined by the SocketPort
	// network; RailPort unused), as a fabric whose switches route any rail
	// to any rail: each VM's rail 0 (rxe0) can then reach the other's rail
	// 1 (rxe1). Without it each rail is a cable of its own (rail-only).
	RailSwitch bool
	// MemoryMiB is each VM's RAM: 2 GiB leaves room for containerd, the
	// kubelet and a pod beside the tools (the images live on the node disk).
	MemoryMiB int
}

// DefaultConfig is the layout scenarios/softroce.yaml expects.
func DefaultConfig(work string) Config {
	return Config{Work: work, SSHPorts: [2]int{42201, 42202}, SocketPort: 42210, RailPort: 42211, KubeletPorts: [2]int{42251, 42252}, MemoryMiB: 2048}
}

// Node disks: made by `make -C images softroce-node` (node.sh,
// node-images.sh). A VM gets them when they exist: node.img as its first
// disk (opened with snapshot=on, so what the VM writes is thrown away when
// QEMU exits and both VMs share one file), the images archive as its second.
const (
	nodeDisk   = "node.img"
	nodeImages = "node-images.oci.tar"
)

// VM is one running QEMU.
type VM struct {
	Name   string
	DataIP string
	// RailIP is the VM's address on the second rail (rxe1's netdev),
	// "" without one.
	RailIP  string
	SSHPort int
	// KubeletPort is where this host reaches the VM's kubelet.
	KubeletPort int
	// NodeDisk says whether the VM has the node disk (it can join).
	NodeDisk bool
	tmp      string // QEMU's TMPDIR (the node disk's snapshot file)
	cmd      *exec.Cmd
	serial   *syncBuffer
	exited   chan struct{}
}

// Pair is the two VMs: vm1 (10.9.0.1, the socket listener) and vm2.
type Pair struct {
	VMs        [2]*VM
	KnownHosts string
	KeyFile    string
	BootTime   time.Duration
	// SocketPort is the data link's QEMU socket network (DataLink).
	SocketPort int
}

// Boot starts both VMs and returns once both printed their ready line
// (rxe0 up, dropbear listening), bounded by ctx. On error nothing is left running.
func Boot(ctx context.Context, cfg Config) (*Pair, error) {
	for _, f := range []string{"vmlinuz", "initrd.gz", "id_ed25519", "known_host_key.pub"} {
		if _, err := os.Stat(filepath.Join(cfg.Work, f)); err != nil {
			return nil, fmt.Errorf("soft-RoCE image incomplete: %w (build it with `make -C images softroce`)", err)
		}
	}
	p := &Pair{KeyFile: filepath.Join(cfg.Work, "id_ed25519"), KnownHosts: filepath.Join(cfg.Work, knownHostsFile(cfg)), SocketPort: cfg.SocketPort}
	if err := writeKnownHosts(cfg, p.KnownHosts); err != nil {
		return nil, err
	}
	start := time.Now()
	for i := range p.VMs {
		vm, err := startVM(cfg, i)
		if err != nil {
			p.Stop()
			return nil, err
		}
		p.VMs[i] = vm
		if i == 0 {
			for _, port := range []int{cfg.SocketPort, cfg.RailPort} {
				if port == 0 {
					continue
				}
				if err := waitListen(ctx, port, vm); err != nil {
					p.Stop()
					return nil, err
				}
			}
		}
	}
	for _, vm := range p.VMs {
		if err := vm.waitReady(ctx); err != nil {
			p.Stop()
			return nil, err
		}
	}
	p.BootTime = time.Since(start)
	return p, nil
}

// knownHostsFile is known_hosts for the lane's pair, and one of its own
// for a pair on other ports (a second pair beside it).
func knownHostsFile(cfg Config) string {
	if cfg.SSHPorts == DefaultConfig("").SSHPorts {
		return "known_hosts"
	}
	return "known_hosts-" + strconv.Itoa(cfg.SSHPorts[0])
}

func writeKnownHosts(cfg Config, path string) error {
	key, err := os.ReadFile(filepath.Join(cfg.Work, "known_host_key.pub"))
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, port := range cfg.SSHPorts {
		fmt.Fprintf(&b, "[127.0.0.1]:%d %s\n", port, strings.TrimSpace(string(key)))
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

func startVM(cfg Config, i int) (*VM, error) {
	n := i + 1
	vm := &VM{Name: "vm" + strconv.Itoa(n), DataIP: "10.9.0." + strconv.Itoa(n), SSHPort: cfg.SSHPorts[i],
		KubeletPort: cfg.KubeletPorts[i], serial: &syncBuffer{}, exited: make(chan struct{})}
	sock := "listen=127.0.0.1:" + strconv.Itoa(cfg.SocketPort)
	if i > 0 {
		sock = "connect=127.0.0.1:" + strconv.Itoa(cfg.SocketPort)
	}
	args := []string{"-accel", "tcg", "-m", strconv.Itoa(cfg.MemoryMiB), "-smp", "1", "-nographic", "-no-reboot",
		"-kernel", filepath.Join(cfg.Work, "vmlinuz"), "-initrd", filepath.Join(cfg.Work, "initrd.gz"),
		"-append", fmt.Sprintf("console=ttyS0 quiet panic=-1 rdmabench.name=%s rdmabench.ip=%s", vm.Name, vm.DataIP),
		"-netdev", "socket,id=d0," + sock}
	dataNIC := fmt.Sprintf("virtio-net-pci,netdev=d0,mac=52:54:00:09:00:%02x,romfile=", n)
	if cfg.RailSwitch {
		// One hub: the socket to the other VM, the data NIC, the rail NIC.
		args = append(args, "-netdev", "hubport,id=u0,hubid=0,netdev=d0", "-netdev", "hubport,id=h0,hubid=0")
		dataNIC = strings.Replace(dataNIC, "netdev=d0", "netdev=h0", 1)
	}
	args = append(args, "-device", dataNIC,
		"-netdev", fmt.Sprintf("user,id=m0,hostfwd=tcp:127.0.0.1:%d-:22,hostfwd=tcp:127.0.0.1:%d-:10250", vm.SSHPort, vm.KubeletPort),
		"-device", fmt.Sprintf("virtio-net-pci,netdev=m0,mac=52:54:00:02:00:%02x,romfile=", n))
	if cfg.RailSwitch {
		vm.RailIP = "10.9.1." + strconv.Itoa(n)
		args = append(args, "-netdev", "hubport,id=h1,hubid=0",
			"-device", fmt.Sprintf("virtio-net-pci,netdev=h1,mac=52:54:00:0a:00:%02x,romfile=", n))
	}
	if cfg.RailPort > 0 && !cfg.RailSwitch {
		rail := "listen=127.0.0.1:" + strconv.Itoa(cfg.RailPort)
		if i > 0 {
			rail = "connect=127.0.0.1:" + strconv.Itoa(cfg.RailPort)
		}
		vm.RailIP = "10.9.1." + strconv.Itoa(n)
		args = append(args, "-netdev", "socket,id=d1,"+rail,
			"-device", fmt.Sprintf("virtio-net-pci,netdev=d1,mac=52:54:00:0a:00:%02x,romfile=", n))
	}
	disk, images := filepath.Join(cfg.Work, nodeDisk), filepath.Join(cfg.Work, nodeImages)
	if exists(disk) && exists(images) {
		vm.NodeDisk = true
		args = append(args, "-drive", "file="+disk+",if=virtio,format=raw,snapshot=on",
			"-drive", "file="+images+",if=virtio,format=raw,readonly=on")
	}
	vm.cmd = exec.Command("qemu-system-x86_64", args...)
	vm.cmd.Stdout, vm.cmd.Stderr = vm.serial, vm.serial
	if vm.NodeDisk {
		// snapshot=on writes to a temporary file that QEMU deletes only
		// when it closes it, so a killed QEMU would leave it: give QEMU
		// a folder of its own, removed (file open or not) once it booted.
		tmp, err := os.MkdirTemp("", "rdmabench-"+vm.Name+"-*")
		if err != nil {
			return nil, err
		}
		vm.tmp = tmp
		vm.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	}
	vm.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := vm.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w (install qemu-system-x86: ./.ci/setup --tests)", vm.Name, err)
	}
	go func() { _ = vm.cmd.Wait(); vm.dropTemp(); close(vm.exited) }()
	return vm, nil
}

func (vm *VM) waitReady(ctx context.Context) error {
	want := "rdmabench-vm: " + vm.Name + " ready"
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	defer vm.dropTemp() // QEMU opened its disks long before init's ready line
	for !strings.Contains(vm.serial.String(), want) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not boot: %w; console:\n%s", vm.Name, ctx.Err(), vm.Console())
		case <-vm.exited:
			return fmt.Errorf("%s: qemu exited; console:\n%s", vm.Name, vm.Console())
		case <-t.C:
		}
	}
	return nil
}

// dropTemp removes QEMU's temporary folder: the snapshot file lives on
// through QEMU's open descriptor and goes when QEMU does, however it ends.
func (vm *VM) dropTemp() {
	if vm.tmp != "" {
		_ = os.RemoveAll(vm.tmp)
	}
}

// Console is the VM's serial output so far (the tail, for error messages).
func (vm *VM) Console() string {
	s := vm.serial.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// Kill ends the VM at once (the "server down" tests) and waits for QEMU.
func (vm *VM) Kill() {
	if vm == nil || vm.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-vm.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-vm.exited:
	case <-time.After(10 * time.Second):
	}
}

// Freeze stops the VM's QEMU (SIGSTOP): the host hangs without closing
// its connections. Thaw resumes it.
func (vm *VM) Freeze() { _ = syscall.Kill(-vm.cmd.Process.Pid, syscall.SIGSTOP) }

// Thaw resumes a frozen VM.
func (vm *VM) Thaw() { _ = syscall.Kill(-vm.cmd.Process.Pid, syscall.SIGCONT) }

// Stop kills both VMs.
func (p *Pair) Stop() {
	for _, vm := range p.VMs {
		if vm != nil {
			vm.Thaw()
			vm.Kill()
		}
	}
}

// Hosts are the pair as ssh backend hosts (as in scenarios/softroce.yaml).
func (p *Pair) Hosts() []scenarios.Host {
	var hs []scenarios.Host
	for _, vm := range p.VMs {
		hs = append(hs, scenarios.Host{Name: vm.Name, Address: "127.0.0.1", Port: vm.SSHPort, User: "root",
			KeyFile: p.KeyFile, KnownHostsFile: p.KnownHosts, DataAddress: vm.DataIP})
	}
	return hs
}

// waitListen waits until QEMU listens on the socket network's port (read
// from /proc/net/tcp: a probe connection would be taken as the peer VM).
func waitListen(ctx context.Context, port int, vm *VM) error {
	want := fmt.Sprintf(":%04X 00000000:0000 0A", port)
	for {
		b, _ := os.ReadFile("/proc/net/tcp")
		if bytes.Contains(b, []byte(want)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never listened on 127.0.0.1:%d: %w", vm.Name, port, ctx.Err())
		case <-vm.exited:
			return fmt.Errorf("%s: qemu exited (port %d in use?); console:\n%s", vm.Name, port, vm.Console())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
