package local

import "syscall"

func sysProcAttr() *syscall.SysProcAttr {
	// Own process group: Kill reaches the tool's children. Pdeathsig: if
	// rdmabench itself dies, the tool does not outlive it.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
