package runner

import (
	"context"
	"slices"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// ncclJSON drops -J from an nccl-tests command whose binary predates it
// (nccl-tests < 2.17.3 runs nothing when given it): its text output is
// parsed instead, and the result says so.
func (l *legRun) ncclJSON(ctx context.Context, ep endpoint.Endpoint, argv []string) []string {
	bin := tools.NCCLBinaryOf(argv)
	if bin == "" || !slices.Contains(argv, "-J") {
		return argv
	}
	c := &l.r.ncclJSON
	key := ep.Name + "\x00" + bin
	c.mu.Lock()
	has, known := c.has[key]
	c.mu.Unlock()
	if !known {
		has = true // when it cannot be asked, -J stays (the current nccl-tests)
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		out, err := l.r.cfg.Backend.Exec(cctx, ep, []string{"sh", "-c", tools.NCCLJSONScript(bin)})
		cancel()
		if err == nil {
			has = tools.NCCLHasJSON(string(out))
		}
		c.mu.Lock()
		if c.has == nil {
			c.has = map[string]bool{}
		}
		c.has[key] = has
		c.mu.Unlock()
	}
	if has {
		return argv
	}
	l.notef("%s on %s has no -J (nccl-tests older than 2.17.3): its text output was parsed", bin, ep.Name)
	return tools.DropJSON(argv)
}
