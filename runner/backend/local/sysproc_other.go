//go:build !linux

package local

import "syscall"

// sysProcAttr on macOS (a laptop driving the ssh or kube backend, or the
// local one over TCP): its own process group, so Kill reaches the tool's
// children. There is no Pdeathsig there: a tool started by an rdmabench
// that crashed is not killed with it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
