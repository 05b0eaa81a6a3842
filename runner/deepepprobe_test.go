package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestDeepEPProbeThroughTheRunner: a deepep_probe test on one endpoint of
// two GPUs runs as the planner plans it (rank 0 first, ready once torch's
// store listens on MASTER_PORT, then rank 1, each with torch.distributed's
// env contract) on the local backend; its result holds the ranks' samples,
// says which program measured with the versions it loaded, and
// preflight found deep_ep.
func TestDeepEPProbeThroughTheRunner(t *testing.T) {
	pythonProbeStandins(t, "rdmabench-deepep", "deepep")
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: deepep-probe-local}
backend: local
pools:
  - {name: ep, gpus: 2}
tests:
  - name: ep
    tool: deepep_probe
    from: ep
    args: {hidden: 256, topk: 4, experts: 16, tokens: 64, llTokens: 16, iterations: 3, moeLayers: 3}
    expect: {minBandwidth: 1Kb/s}
`
	rep, out := runLocalScenario(t, "deepep-probe.yaml", text, 430)
	r := rep.Results[0]
	var raw []byte
	for _, f := range r.RawOutputs {
		b, _ := os.ReadFile(filepath.Join(out, f))
		raw = append(raw, b...)
	}
	// Ten measurements (2 ranks × normal dispatch and combine, low-latency
	// dispatch, combine and the two back to back), each its own sample:
	// ranks that moved the same bytes stay apart, named by phase and rank.
	if r.Verdict != schema.VerdictPass || len(r.Samples) != 10 || r.BestBps <= 0 {
		t.Fatalf("%s %q, %d samples\n%s\n%s", r.Verdict, r.Reason, len(r.Samples), strings.Join(r.Commands, "\n"), raw)
	}
	for _, s := range r.Samples {
		if s.Phase == "" || s.Rank == nil || (s.Batch != 64 && s.Batch != 16) {
			t.Errorf("sample without its phase, rank or tokens: %+v", s)
		}
	}
	// The EP budget: both kernel sets, the test's 3 MoE layers.
	if b := rep.EPBudget; b == nil || len(b.Rows) != 2 || b.Rows[0].Stage != schema.EPStageDecode || b.Rows[0].MoELayers != 3 ||
		b.Rows[0].Tokens != 16 || b.Rows[1].Tokens != 64 || b.Rows[1].Ms <= 0 || b.Rows[0].Dispatch.RanksSeen != 2 ||
		b.Rows[0].Pair == nil || b.Rows[0].LayerUS != b.Rows[0].Pair.AvgUS || b.Rows[1].Pair != nil {
		t.Errorf("EP budget %+v", b)
	}
	if r.Program != "rdmabench-deepep" || r.Libraries["deep_ep"] != "1.2.1+standin" || r.Libraries["torch"] != "2.11.0+standin" {
		t.Errorf("program %q, libraries %v: want the probe and the DeepEP it loaded", r.Program, r.Libraries)
	}
	for _, c := range r.Commands {
		if !strings.Contains(c, "MASTER_ADDR=127.0.0.1") || !strings.Contains(c, "WORLD_SIZE=2") {
			t.Errorf("command without the env contract: %s", c)
		}
	}
	found := false
	for _, ep := range rep.Preflight {
		for _, c := range ep.Checks {
			found = found || c.ID == "deepep-probe-finds-deepep" && c.Status == "pass" && strings.Contains(c.Evidence, "DeepEP V1 1.2.1+standin")
		}
	}
	if !found {
		t.Errorf("preflight did not find the stand-in DeepEP: %+v", rep.Preflight)
	}
}

// TestDeepEPProbeFailedKernelSetIsNotAPass: the normal kernels measured,
// then the low-latency ones failed (the probe names the failure and exits
// 1): the result is not a plain pass on the normal kernels' samples, and
// its reason names the kernel set that failed.
func TestDeepEPProbeFailedKernelSetIsNotAPass(t *testing.T) {
	pythonProbeStandins(t, "rdmabench-deepep", "deepep")
	t.Setenv("RDMABENCH_STANDIN_FAIL", "low_latency")
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: deepep-probe-half}
backend: local
pools:
  - {name: ep, gpus: 2}
tests:
  - name: ep
    tool: deepep_probe
    from: ep
    args: {hidden: 256, topk: 4, experts: 16, tokens: 64, llTokens: 16, iterations: 3}
`
	sc, err := scenarios.LoadBytes("deepep-probe-half.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }, PortOffset: 440})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: t.TempDir(), Progress: testWriter{t}})
	if rep == nil || len(rep.Results) != 1 {
		t.Fatalf("run: %v", err)
	}
	r := rep.Results[0]
	if r.Verdict == schema.VerdictPass || !strings.Contains(r.Reason, "low_latency") {
		t.Errorf("verdict %s, reason %q, %d samples: want the failed low-latency set said, not a pass", r.Verdict, r.Reason, len(r.Samples))
	}
}
