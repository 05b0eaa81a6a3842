package nic

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// CountGPUs counts this host's NVIDIA GPUs and says how: the lines of
// `nvidia-smi -L` ("GPU 0: NVIDIA H100 …"; bounded to 10 s), else the
// /dev/nvidiaN device files, else none.
func CountGPUs() (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "nvidia-smi", "-L").Output(); err == nil {
		n := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "GPU ") {
				n++
			}
		}
		return n, "nvidia-smi -L"
	}
	return countDevFiles("/dev"), "/dev/nvidiaN (no nvidia-smi)"
}

var gpuDevFile = regexp.MustCompile(`^nvidia[0-9]+$`)

func countDevFiles(dir string) int {
	names, _ := filepath.Glob(filepath.Join(dir, "nvidia*"))
	n := 0
	for _, p := range names {
		if gpuDevFile.MatchString(filepath.Base(p)) {
			n++
		}
	}
	return n
}
