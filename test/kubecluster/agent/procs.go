package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// netnsInode is the inode that identifies a named network namespace.
func netnsInode(netns string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join("/run/netns", netns), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// PidsInNetNS lists every process whose network namespace is netns,
// whoever started it: container processes, exec'd commands and anything
// they daemonised. It reads /proc/*/ns/net, as `ip netns pids` does.
func PidsInNetNS(netns string) ([]int, error) {
	ino, err := netnsInode(netns)
	if err != nil {
		return nil, err
	}
	want := fmt.Sprintf("net:[%d]", ino)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		link, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net"))
		if err == nil && link == want {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// ProcessInfo is a process still running in a pod's namespace.
type ProcessInfo struct {
	Node, Namespace, Pod, NetNS string
	PID                         int
	Cmdline                     string
}

func cmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// signalNetNS sends sig to every process in netns; it returns how many
// were found.
func signalNetNS(netns string, sig syscall.Signal) int {
	pids, err := PidsInNetNS(netns)
	if err != nil {
		return 0
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// KillNetNS ends every process in netns: SIGTERM, up to grace for them to
// leave, then SIGKILL until none is left (bounded by killWait). It returns
// an error naming what survived.
func KillNetNS(netns string, grace time.Duration) error {
	const killWait = 10 * time.Second
	if signalNetNS(netns, syscall.SIGTERM) > 0 && grace > 0 {
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) {
			if pids, _ := PidsInNetNS(netns); len(pids) == 0 {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	deadline := time.Now().Add(killWait)
	for {
		if signalNetNS(netns, syscall.SIGKILL) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			pids, _ := PidsInNetNS(netns)
			return fmt.Errorf("netns %s: processes %v survived SIGKILL for %s", netns, pids, killWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
