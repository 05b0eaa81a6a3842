//go:build !linux

package pyprobe

import "syscall"

// procAttr puts the script in a process group of its own; there is no
// parent-death signal here (Linux's), so a launcher killed outright leaves
// the script to its own end.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
