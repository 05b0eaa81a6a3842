package runner

import (
	"context"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// gpuSkipReason is the skip reason of a GPU test whose endpoint has none.
func (r *run) gpuSkipReason(job *plan.Job) (bool, string) {
	if !tools.NeedsGPU(r.tests[job.Test], job.Tool) {
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
