package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// nixlProbeStandins builds rdmabench-nixl into a folder on PATH and puts
// the stand-in nixl package (probe/nixl/testdata/standin) on PYTHONPATH,
// as the tools bundle and the serving image's python3 would be.
func nixlProbeStandins(t *testing.T) { pythonProbeStandins(t, "rdmabench-nixl", "nixl") }

// pythonProbeStandins builds one of rdmabench's Python probes (program,
// from cmd/) into a folder on PATH beside a stand-in nvidia-smi, and puts
// its stand-in packages (probe/<pkg>/testdata/standin) on PYTHONPATH.
func pythonProbeStandins(t *testing.T, program, pkg string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3: " + program + " cannot run")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, program), "../cmd/"+program)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	std, err := filepath.Abs(filepath.Join("..", "probe", pkg, "testdata", "standin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeNvidiaSmi(dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("PYTHONPATH", std)
}

// TestNixlProbeThroughTheRunner: a nixl_probe test as the planner plans it
// (the target first, ready when its agent is in the run's etcd, then the
// initiator) runs on the local backend, the data checked, and its report
// says which program measured, with NIXL's version, the backend and the op.
func TestNixlProbeThroughTheRunner(t *testing.T) {
	nixlProbeStandins(t)
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: nixl-probe-local}
backend: local
pools:
  - {name: decode}
  - {name: prefill}
tests:
  - name: kv
    tool: nixl_probe
    from: decode
    to: prefill
    requires: tcp
    args: {minSize: 64KiB, maxSize: 256KiB, iterations: 8}
    expect: {minBandwidth: 1Kb/s}
`
	rep, out := runLocalScenario(t, "nixl-probe.yaml", text, 420)
	r := rep.Results[0]
	var raw []byte
	for _, f := range r.RawOutputs {
		b, _ := os.ReadFile(filepath.Join(out, f))
		raw = append(raw, b...)
	}
	if r.Verdict != schema.VerdictPass || len(r.Samples) != 3 || r.BestBps <= 0 {
		t.Fatalf("%s %q, %d samples\n%s\n%s", r.Verdict, r.Reason, len(r.Samples), strings.Join(r.Commands, "\n"), raw)
	}
	if r.Program != "rdmabench-nixl" || r.Libraries["nixl"] != "0.9.0+standin" || r.Libraries["python"] == "" {
		t.Errorf("program %q, libraries %v: want the probe and the NIXL it loaded", r.Program, r.Libraries)
	}
	if r.Op != "READ" || r.Backend != "UCX" || !strings.Contains(string(raw), "# rdmabench-nixl version 1 role=initiator nixl=0.9.0+standin") {
		t.Errorf("op %q backend %q\n%s", r.Op, r.Backend, raw)
	}
	found := 0
	for _, ep := range rep.Preflight {
		for _, c := range ep.Checks {
			if c.ID == "nixl-probe-finds-nixl" && c.Status == "pass" && strings.Contains(c.Evidence, "NIXL 0.9.0+standin") {
				found++
			}
		}
	}
	if found != 2 {
		t.Errorf("preflight found the stand-in NIXL on %d of 2 endpoints: %+v", found, rep.Preflight)
	}
}
