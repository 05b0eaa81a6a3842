package pyprobe

import "syscall"

// procAttr puts the script in a process group of its own (its libraries'
// helpers go with it) and kills it if the launcher dies without ending it
// (SIGKILL after a backend's grace, the OOM killer): the group kill that
// reaches the launcher does not reach the script's own group, and a script
// left running would hold its GPU and the leg's MASTER_PORT.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
