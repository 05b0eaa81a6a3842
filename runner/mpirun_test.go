package runner

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// mpiScenario is the one-process-per-GPU path on one host: two pools of one
// endpoint and one GPU each, so the launcher runs a real `mpirun -np 2
// --map-by slot -H 127.0.0.1:2 …` of the nccl-tests stand-in.
const mpiScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: mpi-standins}
backend: local
pools:
  - {name: rank0, gpus: 1}
  - {name: rank1, gpus: 1}
tests:
  - name: sr
    tool: nccl
    from: rank0
    to: rank1
    args: {collective: sendrecv, minSize: 1KiB, maxSize: 64KiB, stepFactor: 4, iterations: 5}
`

func needMpirun(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed (Debian/Ubuntu: openmpi-bin)")
	}
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
}

// TestMpirunSameHostStandins launches two ranks on one host through the
// planner's mpirun command and checks that the report names 2 ranks and
// the stand-in's rows.
func TestMpirunSameHostStandins(t *testing.T) {
	needMpirun(t)
	standins(t)
	sc, err := scenarios.LoadBytes("mpi.yaml", []byte(mpiScenario))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }, PortOffset: 400})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Hold(); err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(p.Rounds[0].Jobs[0].Legs[0].Commands[0].Argv, " ")
	if !strings.Contains(argv, "mpirun --allow-run-as-root -np 2 --map-by slot -H 127.0.0.1:2 ") {
		t.Fatalf("launcher: %s", argv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: t.TempDir(),
		LineRate: judge.ResolveLineRate(sc, nil), Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	r := rep.Results[0]
	if r.Verdict != schema.VerdictPass || len(r.Samples) != 4 || r.BestBps <= 0 || r.Pair() != "2 ranks" {
		t.Fatalf("%s %q (%s): %d samples, best %v, pair %q", r.Verdict, r.Reason, r.ErrorClass, len(r.Samples), r.BestBps, r.Pair())
	}
}

// TestMpirunRefusalIsLauncherError: a real refusal (more processes than
// slots) is a launcher_error whose reason is mpirun's own words.
func TestMpirunRefusalIsLauncherError(t *testing.T) {
	needMpirun(t)
	standins(t)
	p := oneLegPlan("nccl", 60, plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleRank, Parse: true,
		Argv: []string{"mpirun", "--allow-run-as-root", "-np", "3", "-H", "127.0.0.1:2", "sendrecv_perf", "-b", "1K", "-e", "1K", "-g", "1"}})
	sc := &scenarios.Scenario{Tests: []scenarios.Test{{Name: "t", Tool: "nccl"}}}
	rep, err := Run(context.Background(), Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: t.TempDir(),
		Parse: func(_ string, r io.Reader) (parsers.Measurement, error) {
			ms, err := parsers.ParseNCCL(r)
			if err != nil || len(ms) == 0 {
				return parsers.Measurement{}, err
			}
			return ms[0], nil
		}})
	if rep == nil || len(rep.Results) != 1 {
		t.Fatalf("run: %v", err)
	}
	r := rep.Results[0]
	if r.Verdict != schema.VerdictError || r.ErrorClass != parsers.ClassLauncher || !strings.Contains(r.Reason, "not enough slots") {
		t.Fatalf("%s %s %q", r.Verdict, r.ErrorClass, r.Reason)
	}
}
