package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// The probe finds orted beside the mpirun that --prefix names (HPC-X), and
// names what is missing with where it comes from.
func TestMPIProbe(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "opt/hpcx/ompi/bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"mpirun", "orted"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", mpiProbeScript)
	cmd.Env = []string{"PATH=" + bin + ":" + filepath.Join(root, "nothing")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "orted="+filepath.Join(bin, "orted")) {
		t.Errorf("orted not found beside mpirun: %s", out)
	}
	st, ev, fix := judgeMPIProbe(string(out))
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil { // the probe looks there too
		if st != ProbeFail || !strings.Contains(ev, "ssh, sshd") || !strings.Contains(fix, "openssh-server") {
			t.Errorf("%v %q %q", st, ev, fix)
		}
	}
	st, ev, _ = judgeMPIProbe("mpirun=/usr/local/mpi/bin/mpirun\nssh=/usr/bin/ssh\nsshd=/usr/sbin/sshd\norted=/usr/local/mpi/bin/orted\n")
	if st != ProbePass || !strings.Contains(ev, "/usr/local/mpi/bin/orted") {
		t.Errorf("%v %q", st, ev)
	}
	st, ev, fix = judgeMPIProbe("mpirun=/usr/bin/mpirun\nssh=/usr/bin/ssh\nsshd=/usr/sbin/sshd\norted=missing\n")
	if st != ProbeFail || ev != "not in the image: orted" || !strings.Contains(fix, "prted") {
		t.Errorf("%v %q %q", st, ev, fix)
	}
	if st, _, _ := judgeMPIProbe("garbage"); st != ProbeUnknown {
		t.Errorf("garbage: %v", st)
	}
	shelltest.Check(t, "mpiProbeScript", mpiProbeScript)
}

// Only an ssh launch (ranks on several hosts) needs the probe.
func TestLaunchProbes(t *testing.T) {
	two := []endpoint.Endpoint{{Name: "a"}, {Name: "b"}}
	if p := LaunchProbes("nccl", scenarios.BackendKube, two); len(p) != 1 || p[0].ID != MPIProbeID {
		t.Errorf("nccl over two pods: %v", p)
	}
	if p := LaunchProbes("nccl", scenarios.BackendLocal, two); p != nil {
		t.Errorf("nccl on one host: %v", p)
	}
	if p := LaunchProbes("nccl", scenarios.BackendKube, two[:1]); p != nil {
		t.Errorf("nccl on one pod: %v", p)
	}
	if p := LaunchProbes("ib_write_bw", scenarios.BackendKube, two); p != nil {
		t.Errorf("perftest: %v", p)
	}
}
