package plan

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestDeepEPRanksDriveTheirEndpointsGPUs: on one host, a deepep_probe
// across prefill (2 GPUs) and decode (2 GPUs) runs four ranks; LOCAL_RANK
// is the GPU within what the rank sees, so each endpoint's ranks must see
// their own GPUs first (decode's ranks GPUs 2 and 3, not 0 and 1 again).
func TestDeepEPRanksDriveTheirEndpointsGPUs(t *testing.T) {
	sc, err := scenarios.LoadBytes("g.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: g}
backend: local
pools:
  - {name: prefill, gpus: 2}
  - {name: decode, gpus: 2}
tests:
  - {name: ep, tool: deepep_probe, from: prefill, to: decode}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(sc, CompileOptions{HostGPUs: func() (int, string) { return 4, "nvidia-smi -L" }, HasRDMA: func(endpoint.Endpoint) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	rounds, err := p.AllRounds()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rounds {
		for _, j := range r.Jobs {
			for _, c := range j.Legs[0].Commands {
				gpu := c.Env["CUDA_VISIBLE_DEVICES"] + "/" + c.Env["LOCAL_RANK"]
				if c.Env["CUDA_VISIBLE_DEVICES"] == "" {
					t.Errorf("%s rank %s on %s: no CUDA_VISIBLE_DEVICES (LOCAL_RANK %s is GPU %s of the host, shared with the other endpoint)", j.ID, c.Env["RANK"], c.Endpoint, c.Env["LOCAL_RANK"], c.Env["LOCAL_RANK"])
				}
				if seen[gpu] {
					t.Errorf("%s: two ranks on %s", j.ID, gpu)
				}
				seen[gpu] = true
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("ranks %v, want 4", seen)
	}
}

// TestDeepEPExpertsOverRanksAtPlanTime: the experts are spread evenly over
// the ranks (both kernel sets refuse otherwise, after torch, NCCL and
// NVSHMEM have started); the planner knows the ranks, so a scenario whose
// experts do not divide over them fails before anything runs, at the test.
func TestDeepEPExpertsOverRanksAtPlanTime(t *testing.T) {
	for _, c := range []struct {
		gpus, args string
		bad        bool
	}{{"3", "{}", true}, {"6", "{experts: 256}", true}, {"3", "{experts: 12, topk: 4}", false}, {"all", "{}", true}, {"4", "{}", false}} {
		sc, err := scenarios.LoadBytes("g.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: g}
backend: local
pools:
  - {name: ep, gpus: `+c.gpus+`}
tests:
  - {name: ep, tool: deepep_probe, from: ep, args: `+c.args+`}
`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compile(sc, CompileOptions{HostGPUs: func() (int, string) { return 6, "nvidia-smi -L" }, HasRDMA: func(endpoint.Endpoint) bool { return true }})
		switch {
		case c.bad && (err == nil || !strings.Contains(err.Error(), "g.yaml:8:") || !strings.Contains(err.Error(), "experts")):
			t.Errorf("gpus %s args %s: %v, want an error at the test naming the experts", c.gpus, c.args, err)
		case !c.bad && err != nil:
			t.Errorf("gpus %s args %s: %v", c.gpus, c.args, err)
		}
	}
}
