package preflight

import (
	"strings"
	"testing"
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
