package runner

import (
	"context"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// needsGPU says whether a test cannot run without a GPU: nccl-tests
// always, nixlbench when either side's segment is VRAM.
func needsGPU(t *scenarios.Test, tool string) bool {
	switch tool {
	case scenarios.ToolNCCL:
		return true
	case scenarios.ToolNixlbench:
		return t != nil && (t.Args.InitiatorSeg == "VRAM" || t.Args.TargetSeg == "VRAM")
	}
	return false
}

// gpuSkipReason is the skip reason of a GPU test whose endpoint has none.
func (r *run) gpuSkipReason(job *plan.Job) (bool, string) {
	if !needsGPU(r.tests[job.Test], job.Tool) {
		return false, ""
	}
	c, ok := r.cfg.Backend.(backend.GPUChecker)
	if !ok {
		return false, ""
	}
	for _, name := range jobEndpoints(job) {
		if !c.HasGPU(context.Background(), r.endpoint(name)) {
			return true, "endpoint " + name + " has no GPU; " + job.Tool + " needs GPU memory"
		}
	}
	return false, ""
}
