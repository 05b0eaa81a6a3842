package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
)

// markerDir records which process owns each cluster's host objects, so a
// later Start can remove what a killed test binary (go test -timeout, a
// crash) could not.
const markerDir = "/run/rdmabench-kubecluster"

// claim records that this process owns the cluster's prefix.
func (c *Cluster) claim() error {
	err := os.MkdirAll(markerDir, 0o755)
	if err == nil {
		err = os.WriteFile(filepath.Join(markerDir, c.prefix()), []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if err != nil {
		return fmt.Errorf("record ownership in %s: %w", markerDir, err)
	}
	return nil
}

// release forgets the claim once everything is removed.
func (c *Cluster) release() { _ = os.Remove(filepath.Join(markerDir, c.prefix())) }

// SweepLeftovers removes the network namespaces (and every process in
// them), veths and bridges of clusters whose owning process has died. It
// never touches a live cluster's objects.
func SweepLeftovers(log func(format string, args ...any)) {
	entries, _ := os.ReadDir(markerDir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(markerDir, e.Name()))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && pid > 0 && syscall.Kill(pid, 0) == nil {
			continue // still alive
		}
		prefix := e.Name()
		removed := sweepPrefix(prefix)
		if log != nil && len(removed) > 0 {
			log("removed leftovers of a dead cluster (pid %d): %s", pid, strings.Join(removed, ", "))
		}
		_ = os.Remove(filepath.Join(markerDir, prefix))
	}
}

func sweepPrefix(prefix string) []string {
	var removed []string
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nss, _ := os.ReadDir("/run/netns")
	for _, ns := range nss {
		if !strings.HasPrefix(ns.Name(), prefix+"-") {
			continue
		}
		_ = agent.KillNetNS(ns.Name(), 0)
		if exec.CommandContext(ctx, "ip", "netns", "del", ns.Name()).Run() == nil {
			removed = append(removed, "netns "+ns.Name())
		}
	}
	links, _ := netInterfaces()
	for _, l := range links {
		if strings.HasPrefix(l, prefix) {
			if exec.CommandContext(ctx, "ip", "link", "del", l).Run() == nil {
				removed = append(removed, "link "+l)
			}
		}
	}
	return removed
}
