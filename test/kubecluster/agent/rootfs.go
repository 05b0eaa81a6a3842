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

// podRoot is a pod's root file systems, one per container whose image
// maps to one, and the process holding their mounts.
type podRoot struct {
	dir    string            // <pod dir>/rootfs: shm, and c/<container>/{upper,work,root}
	roots  map[string]string // container → its overlay's mount point (mounted only in the holder's namespace)
	holder *exec.Cmd
}

// rootSetup runs under `[ip netns exec NS] unshare -m --propagation private`,
// with $1 the per-pod dir, $2 the size of /dev/shm in bytes ("" for the
// runtime's default, unbounded here), then five arguments per container:
// its name, its image's root (the overlay's lower), the extra bin dir (""
// for none), its GPU placeholders' indexes ("0,1"; "" for none) and its
// emptyDir mounts ("SRC|DST|ro SRC|DST|rw"; the pod's volume folders,
// shared by its containers as a kubelet's emptyDir is). One
// /dev/shm (a tmpfs) is bound into every container's root, as a pod's
// memory-backed emptyDir is mounted in each of its containers. It prints
// "ready" once every mount is in place, then becomes the holder.
const rootSetup = `set -e
D=$1; S=$2; shift 2
mkdir -p "$D/shm"
mount -t tmpfs -o "mode=1777,nosuid,nodev${S:+,size=$S}" tmpfs "$D/shm"
while [ $# -ge 5 ]; do
N=$1; L=$2; X=$3; G=$4; V=$5; shift 5; C=$D/c/$N; R=$C/root
mount -t overlay overlay -o "lowerdir=$L,upperdir=$C/upper,workdir=$C/work" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount -t tmpfs -o mode=755,size=16m,nosuid tmpfs "$R/dev"
for d in null zero full random urandom tty; do touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"; done
mkdir "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"
mount --bind "$D/shm" "$R/dev/shm"
ln -s /proc/self/fd "$R/dev/fd"; ln -s /proc/self/fd/0 "$R/dev/stdin"
ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
if [ -d /dev/infiniband ]; then mkdir "$R/dev/infiniband"; mount --rbind /dev/infiniband "$R/dev/infiniband"; fi
for i in $(echo "$G" | tr ',' ' '); do touch "$R/dev/nvidia$i"; mount --bind /dev/null "$R/dev/nvidia$i"; done
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$R/run"
mkdir -p "$R/run/sshd" "$R/run/lock"
if [ -n "$X" ]; then mkdir -p "$R` + ExtraBinMount + `"; mount --bind -o ro "$X" "$R` + ExtraBinMount + `"; fi
for m in $V; do s=${m%%|*}; t=${m#*|}; o=${t#*|}; t=${t%%|*}; mkdir -p "$R$t"; mount --bind "$s" "$R$t"; if [ "$o" = ro ]; then mount -o remount,bind,ro "$R$t"; fi; done
done
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

// setupRoot gives each container whose image maps to a root file system
// a root of its own, as a runtime gives each container its image; one
// holder keeps all of them mounted. A pod whose images map to none runs
// on the host's file system.
func (p *pod) setupRoot(podDir string) error {
	r := &podRoot{dir: filepath.Join(podDir, "rootfs"), roots: map[string]string{}}
	var args []string
	for _, c := range append(append([]*container{}, p.inits...), p.containers...) {
		lower := p.agent.rootFS(c.spec.Image)
		if lower == "" {
			continue
		}
		cdir := filepath.Join(r.dir, "c", c.spec.Name)
		for _, d := range []string{"upper/etc", "work", "root"} {
			if err := os.MkdirAll(filepath.Join(cdir, d), 0o755); err != nil {
				return err
			}
		}
		if err := p.writeEtc(filepath.Join(cdir, "upper", "etc")); err != nil {
			return err
		}
		r.roots[c.spec.Name] = filepath.Join(cdir, "root")
		vols, err := p.emptyDirs(r.dir, c)
		if err != nil {
			return err
		}
		args = append(args, c.spec.Name, lower, p.agent.extraBin(c.spec.Image), p.gpuIndexes(c), vols)
	}
	if len(args) == 0 {
		return nil
	}
	var argv []string
	if p.net.NetNS != "" {
		argv = []string{"ip", "netns", "exec", p.net.NetNS}
	}
	argv = append(argv, "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", rootSetup, "sh", r.dir, shmBytes(p.spec))
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
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

// emptyDirs are a container's emptyDir mounts for rootSetup: one folder
// per volume under the pod's root dir, shared by its containers (an init
// container fills what the others read); /dev/shm and the hugepages
// volumes are mounted otherwise.
func (p *pod) emptyDirs(dir string, c *container) (string, error) {
	vols := map[string]corev1.Volume{}
	for _, v := range p.spec.Spec.Volumes {
		vols[v.Name] = v
	}
	var out []string
	for _, m := range c.spec.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok || v.EmptyDir == nil || m.MountPath == "/dev/shm" || strings.HasPrefix(string(v.EmptyDir.Medium), "HugePages") ||
			strings.ContainsAny(m.MountPath, " |") {
			continue
		}
		src := filepath.Join(dir, "vol", m.Name)
		if err := os.MkdirAll(src, 0o777); err != nil {
			return "", err
		}
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		out = append(out, src+"|"+m.MountPath+"|"+mode)
	}
	return strings.Join(out, " "), nil
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
	root := ""
	if r != nil {
		root = r.roots[c.spec.Name]
	}
	if root == "" || r.holder == nil || r.holder.Process == nil {
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
	args = append(args, "--", chrootPath(), root)
	args = append(args, p.restrict(c, root)...)
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

// hasRoot says whether the container runs in a root file system of its own.
func (p *pod) hasRoot(c *container) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.root != nil && p.root.roots[c.spec.Name] != ""
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
