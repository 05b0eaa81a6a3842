package preflight

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestGPUCountWarnsOfGPUsLeftOut: a host with more GPUs than the scenario
// gives is a warning that names how many are not measured and the fix.
func TestGPUCountWarnsOfGPUsLeftOut(t *testing.T) {
	c := gpuCount(Facts{GPUSmi: 4}, Want{GPUs: 1})
	if c.Status != "warn" || !strings.Contains(c.Evidence, "3 GPU(s) here are not measured") || !strings.Contains(c.Fix, "gpus: all") {
		t.Errorf("%+v", c)
	}
	if c := gpuCount(Facts{GPUSmi: 4}, Want{GPUs: 4}); c.Status != "pass" {
		t.Errorf("all GPUs given: %+v", c)
	}
}

// TestGPUCountCountsTheHostsEndpoints: prefill and decode each with a GPU
// of their own on a 4-GPU host leave 2 out, not 3 each (as 4×H100 said).
func TestGPUCountCountsTheHostsEndpoints(t *testing.T) {
	c := gpuCount(Facts{GPUSmi: 4}, Want{GPUs: 1, HostGPUs: 2})
	if c.Status != "warn" || !strings.Contains(c.Evidence, "2 GPU(s) here are not measured") || !strings.Contains(c.Evidence, "2 to the endpoints on this host") {
		t.Errorf("%+v", c)
	}
	if c := gpuCount(Facts{GPUSmi: 2}, Want{GPUs: 1, HostGPUs: 2}); c.Status != "pass" {
		t.Errorf("both GPUs used by the host's endpoints: %+v", c)
	}
}

// TestGPUCountSaysEndpointsShareGPUs: prefill and decode with 2 GPUs each
// on a 2-GPU host do not fit (the planner gives them no GPUs of their
// own): each endpoint's count alone fits, yet together they put two ranks
// on one GPU (NCCL refuses a collective across them). A warning that says
// so, not a pass, and not a failure that skips tests that can share.
func TestGPUCountSaysEndpointsShareGPUs(t *testing.T) {
	c := gpuCount(Facts{GPUSmi: 2}, Want{GPUs: 2, HostGPUs: 4})
	if c.Status != "warn" || !strings.Contains(c.Evidence, "4 to the endpoints on this host") || !strings.Contains(c.Evidence, "share") {
		t.Errorf("%+v", c)
	}
}

// TestPreflightCountsEndpointsThatDoNotFit: on the local backend the
// endpoints' GPUs are counted together whether or not they fit the host.
func TestPreflightCountsEndpointsThatDoNotFit(t *testing.T) {
	sc, err := scenarios.LoadBytes("g.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: g}
backend: local
pools:
  - {name: prefill, gpus: 2}
  - {name: decode, gpus: 2}
tests:
  - {name: sr, tool: nccl_probe, from: decode, to: prefill, args: {collective: sendrecv}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{HostGPUs: func() (int, string) { return 2, "nvidia-smi -L" }, HasRDMA: func(endpoint.Endpoint) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	units, _ := preflightUnits(p, sc, p.Endpoints, false, "")
	for _, u := range units {
		if u.want.HostGPUs != 4 {
			t.Errorf("%s: HostGPUs %d, want 4 (both endpoints' GPUs, on one host)", u.ep.Name, u.want.HostGPUs)
		}
	}
}
