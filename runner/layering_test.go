package runner

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPlannerAndJudgeStayPure keeps the import direction one way: the
// executor (this package) uses runner/plan and runner/judge, never the
// other way round, and neither of them reaches a backend implementation,
// the network or the process table. go list reads the real import graph,
// so a new import anywhere in their dependency closure is caught.
func TestPlannerAndJudgeStayPure(t *testing.T) {
	forbidden := []string{
		"github.com/rdmabench/rdmabench/runner",
		"github.com/rdmabench/rdmabench/runner/local",
		"github.com/rdmabench/rdmabench/runner/ssh",
		"github.com/rdmabench/rdmabench/runner/kube",
		"github.com/rdmabench/rdmabench/runner/etcd",
		"os/exec",
		"net/http",
	}
	for _, pkg := range []string{"./plan", "./judge"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		for _, f := range forbidden {
			if deps[f] {
				t.Errorf("%s depends on %s: the planner and the judge must stay pure (scenario/measurements in, plan/verdict out)", pkg, f)
			}
		}
	}
}
