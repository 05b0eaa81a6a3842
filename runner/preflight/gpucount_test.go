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
