//go:build !linux

package local

import (
	"errors"
	"os/exec"
)

// startPinned: CPU sets are Linux's.
func startPinned(_ *exec.Cmd, cpuset string) error {
	return errors.New("cpuset " + cpuset + ": pinning processes to CPUs needs Linux")
}
