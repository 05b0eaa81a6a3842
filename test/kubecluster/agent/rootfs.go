package agent

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A pod whose image maps to a root file system (Options.RootFS) gets a root
// of its own, as a container runtime would give it: a mount namespace held
// by one process (the holder, `sleep infinity`), in which
//
//	<pod dir>/rootfs/root   overlay: the unpacked image read-only below, the pod's
//	                        own writable layer (<pod dir>/rootfs/upper) above
//	  /proc                 a proc mount
//	  /sys                  the pod's network namespace's sysfs (ip netns exec)
//	  /dev                  a tmpfs with null, zero, full, random, urandom, tty,
//	                        pts (a new devpts instance), shm (tmpfs, sized as the
//	                        pod's memory-backed emptyDir at /dev/shm), fd links,
//	                        /dev/infiniband when the host has it, and one
//	                        placeholder /dev/nvidiaN (a bind of /dev/null) per
//	                        nvidia.com/gpu the pod's containers request
//	  /tmp, /run            tmpfs (pods share no /tmp; /run/sshd exists)
//	  /etc/hosts, resolv.conf, hostname   written into the pod's layer
//	  /opt/rdmabench-test/bin             Options.ExtraBinDir, read-only
//
// Container processes and exec'd commands enter that namespace (and the
// pod's network namespace) with nsenter and chroot into the root. Nothing is
// mounted in the host's mount table: when the pod's processes are killed the
// namespace and every mount in it go with the holder, and the pod's layer
// is removed.

// ExtraBinMount is where Options.ExtraBinDir appears in a pod's root (first
// on PATH).
const ExtraBinMount = "/opt/rdmabench-test/bin"

// GPUResource is the extended resource whose count becomes placeholder
// /dev/nvidiaN device nodes in the pod's root.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// podRoot is a pod's root file system and the process holding its mounts.
type podRoot struct {
	dir    string // <pod dir>/rootfs: upper, work, root
	root   string // the overlay's mount point (mounted only in the holder's namespace)
	holder *exec.Cmd
}

// rootSetup runs under `[ip netns exec NS] unshare -m --propagation private`,
// with $1 lower, $2 the per-pod dir, $3 the extra bin dir ("" for none),
// $4 the number of GPU placeholders, $5 the size of /dev/shm in bytes (""
// for the runtime's default, unbounded here). It prints "ready" once every
// mount is in place, then becomes the holder.
const rootSetup = `set -e
L=$1; D=$2; X=$3; G=$4; S=$5; R=$D/root
mount -t overlay overlay -o "lowerdir=$L,upperdir=$D/upper,workdir=$D/work" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount -t tmpfs -o mode=755,size=16m,nosuid tmpfs "$R/dev"
for d in null zero full random urandom tty; do touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"; done
mkdir "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"
mount -t tmpfs -o "mode=1777,nosuid,nodev${S:+,size=$S}" tmpfs "$R/dev/shm"
ln -s /proc/self/fd "$R/dev/fd"; ln -s /proc/self/fd/0 "$R/dev/stdin"
ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
if [ -d /dev/infiniband ]; then mkdir "$R/dev/infiniband"; mount --rbind /dev/infiniband "$R/dev/infiniband"; fi
i=0; while [ "$i" -lt "$G" ]; do touch "$R/dev/nvidia$i"; mount --bind /dev/null "$R/dev/nvidia$i"; i=$((i+1)); done
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$R/run"
mkdir -p "$R/run/sshd" "$R/run/lock"
if [ -n "$X" ]; then mkdir -p "$R` + ExtraBinMount + `"; mount --bind -o ro "$X" "$R` + ExtraBinMount + `"; fi
echo ready
exec sleep infinity
`

// shmBytes is the size of the memory-backed emptyDir a container mounts
// at /dev/shm (its sizeLimit, as a kubelet sizes such a tmpfs), "" when
// none does.
func shmBytes(spec *corev1.Pod) string {
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Spec.Volumes {
		vols[v.Name] = v
	}
	for _, c := range spec.Spec.Containers {
		for _, m := range c.VolumeMounts {
			v, ok := vols[m.Name]
			if m.MountPath == "/dev/shm" && ok && v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory && v.EmptyDir.SizeLimit != nil {
				return strconv.FormatInt(v.EmptyDir.SizeLimit.Value(), 10)
			}
		}
	}
	return ""
}

// podGPUs is the number of nvidia.com/gpu the pod's containers ask for
// (limits, else requests), as a device plugin would allocate them.
func podGPUs(spec *corev1.Pod) int {
	n := 0
	for _, c := range spec.Spec.Containers {
		n += containerGPUs(c)
	}
	return n
}

func containerGPUs(c corev1.Container) int {
	q, ok := c.Resources.Limits[GPUResource]
	if !ok {
		q, ok = c.Resources.Requests[GPUResource]
	}
	if !ok {
		return 0
	}
	return int(q.Value())
}

// gpuIndexes are the placeholder devices container i is given (the pod's
// GPUs in container order), as NVIDIA_VISIBLE_DEVICES writes them.
func (p *pod) gpuIndexes(c *container) string {
	first := 0
	for _, o := range p.containers {
		if o == c {
			n := containerGPUs(c.spec)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = strconv.Itoa(first + i)
			}
			return strings.Join(ids, ",")
		}
		first += containerGPUs(o.spec)
	}
	return ""
}

// setupRoot gives the pod its root when its (first) container's image maps
// to a root file system; a pod on the host's file system gets none.
func (p *pod) setupRoot(podDir string) error {
	lower := ""
	for _, c := range append(append([]*container{}, p.inits...), p.containers...) {
		if l := p.agent.rootFS(c.spec.Image); l != "" {
			lower = l
			break
		}
	}
	if lower == "" {
		return nil
	}
	r := &podRoot{dir: filepath.Join(podDir, "rootfs")}
	r.root = filepath.Join(r.dir, "root")
	for _, d := range []string{"upper/etc", "work", "root"} {
		if err := os.MkdirAll(filepath.Join(r.dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := p.writeEtc(filepath.Join(r.dir, "upper", "etc")); err != nil {
		return err
	}
	var args []string
	if p.net.NetNS != "" {
		args = []string{"ip", "netns", "exec", p.net.NetNS}
	}
	args = append(args, "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", rootSetup, "sh",
		lower, r.dir, p.agent.opts.ExtraBinDir, strconv.Itoa(podGPUs(p.spec)), shmBytes(p.spec))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p.mu.Lock()
	if p.deleting {
		p.mu.Unlock()
		return errors.New("pod deleted")
	}
	err = cmd.Start()
	if err == nil {
		if p.pgids == nil {
			p.pgids = map[int]bool{}
		}
		p.pgids[cmd.Process.Pid] = true
		r.holder = cmd
		p.root = r
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("unexpected %q", line)
		}
		done <- err
	}()
	go func() { _ = cmd.Wait() }() // reaped whenever the pod's processes are killed
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		err = errors.New("timed out")
	}
	if err != nil {
		return fmt.Errorf("pod root file system: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// writeEtc writes the pod's /etc/hosts, resolv.conf and hostname into its
// own layer, as a kubelet writes them for a container.
func (p *pod) writeEtc(etc string) error {
	ip := p.podIP()
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	if ip != "" {
		hosts += ip + "\t" + p.spec.Name + "\n"
	}
	resolv, _ := os.ReadFile("/etc/resolv.conf")
	for name, b := range map[string][]byte{"hosts": []byte(hosts), "resolv.conf": resolv, "hostname": []byte(p.spec.Name + "\n")} {
		if err := os.WriteFile(filepath.Join(etc, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// removeRoot deletes the pod's layer once its processes (the holder
// among them) are gone: the namespace and its mounts went with them.
func (p *pod) removeRoot() error {
	p.mu.Lock()
	r := p.root
	p.mu.Unlock()
	if r == nil {
		return nil
	}
	var err error
	for range 50 { // the holder's namespace is released as it is reaped
		if err = os.RemoveAll(r.dir); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("remove pod root %s: %w", r.dir, err)
}

// wrap makes argv run in the pod: in its root (mount namespace, chroot)
// when it has one, else in its network namespace on the host's files; with
// the capabilities, user and no_new_privs its securityContext gives
// (restrict), as a container runtime would.
func (p *pod) wrap(c *container, argv []string) []string {
	p.mu.Lock()
	r := p.root
	p.mu.Unlock()
	if r == nil || r.holder == nil || r.holder.Process == nil {
		var args []string
		if p.net.NetNS != "" { // hostNetwork pods run in the host's
			args = []string{"ip", "netns", "exec", p.net.NetNS}
		}
		args = append(args, p.restrict(c, "/")...)
		return append(args, argv...)
	}
	args := []string{"nsenter", "-t", strconv.Itoa(r.holder.Process.Pid), "-m"}
	if p.net.NetNS != "" {
		args = append(args, "-n")
	}
	args = append(args, "--", chrootPath(), r.root)
	args = append(args, p.restrict(c, r.root)...)
	if c.spec.WorkingDir != "" {
		args = append(args, "env", "-C", c.spec.WorkingDir)
	}
	return append(args, argv...)
}

// chrootPath is the host's chroot, by full path: nsenter looks programs up
// with the container's PATH.
func chrootPath() string {
	if p, err := exec.LookPath("chroot"); err == nil {
		return p
	}
	return "/usr/sbin/chroot"
}

// hasRoot says whether the pod runs in a root file system of its own.
func (p *pod) hasRoot() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.root != nil
}

// podIP is the pod's primary address ("" before its network is up); the
// caller holds p.mu or owns the pod's start.
func (p *pod) podIP() string {
	if p.net == nil {
		return ""
	}
	if len(p.net.Attachments) > 0 {
		return p.net.Attachments[0].IP.String()
	}
	return p.agent.hostIP()
}
