package local

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// TestStartPinsToTheCPUSet: an endpoint with a CPU set runs its processes
// (and their children) on those CPUs only; this process's threads keep
// theirs; a CPU the host lacks fails the start, naming the CPUs it has.
func TestStartPinsToTheCPUSet(t *testing.T) {
	last := runtime.NumCPU() - 1
	run := func(cpuset string) (string, error) {
		var out bytes.Buffer
		p, err := New().Start(context.Background(), endpoint.Endpoint{Name: "a-0", CPUSet: cpuset}, backend.Command{
			Argv: []string{"sh", "-c", "grep Cpus_allowed_list /proc/self/status; sh -c 'grep Cpus_allowed_list /proc/self/status'"}, Stdout: &out, Stderr: &out})
		if err != nil {
			return "", err
		}
		if _, err := p.Wait(context.Background()); err != nil {
			return "", err
		}
		return out.String(), nil
	}
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	out, err := run(strconv.Itoa(last))
	if err != nil || strings.Count(out, "Cpus_allowed_list:\t"+strconv.Itoa(last)+"\n") != 2 {
		t.Errorf("cpuset %d: %v\n%s", last, err, out)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != before {
		t.Errorf("this process's CPUs changed: %v → %v (%v)", before.Count(), after.Count(), err)
	}
	if _, err := run("4095"); err == nil || !strings.Contains(err.Error(), "cpuset 4095:") || !strings.Contains(err.Error(), "this host has CPUs 0-"+strconv.Itoa(last)) {
		t.Errorf("a CPU the host lacks: %v", err)
	}
}
