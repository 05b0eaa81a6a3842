package local

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/scenarios"
)

// startPinned starts c with its processes on the CPUs of cpuset
// (pools[].cpusets): a child inherits the CPU mask of the thread that
// forks it, so this thread's mask is set for the fork and put back after.
func startPinned(c *exec.Cmd, cpuset string) error {
	cpus, err := scenarios.ParseCPUList(cpuset)
	if err != nil {
		return fmt.Errorf("cpuset: %w", err)
	}
	var set, old unix.CPUSet
	for _, n := range cpus {
		set.Set(n)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("cpuset %s: reading this thread's CPUs: %w", cpuset, err)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("cpuset %s: %w (this host has CPUs 0-%d)", cpuset, err, runtime.NumCPU()-1)
	}
	defer func() { _ = unix.SchedSetaffinity(0, &old) }()
	return c.Start()
}
