package e2ekube

import (
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report"
)

// The product's headline scenario, shipped as is, on the test cluster:
// four pods on four nodes (prefill and decode avoid each other), the
// secondary network attached. The nodes have no RDMA, so rping, write-bw
// and kv-read are skipped with their reason. The pods see their
// nvidia.com/gpu as placeholder /dev/nvidiaN (the agent's device-plugin
// part), so nccl-sendrecv is not skipped: it runs the nccl-tests stand-in
// through mpirun across the pods, which needs the NCCL launcher (branch
// nccl); until then its result may be an error, never a skip.
func TestShippedPDDisaggOnTheTestCluster(t *testing.T) {
	c := needCluster(t)
	createNamespace(t, c, "e2e-pd")
	createNAD(t, c, "e2e-pd", "rdma-sriov")
	r := run(t, c, "../../scenarios/pd-disagg.yaml", 4*time.Minute, nil, "-n", "e2e-pd")
	if (r.code != 0 && r.code != 3) || r.rep == nil {
		t.Fatalf("exit %d", r.code)
	}
	if len(r.rep.Endpoints) != 4 {
		t.Fatalf("%d endpoints, want 4", len(r.rep.Endpoints))
	}
	nodes := map[string]bool{}
	for _, ep := range r.rep.Endpoints {
		nodes[ep.Node] = true
		if ep.Network != "e2e-pd/rdma-sriov" || ep.Interface == "" {
			t.Errorf("endpoint %+v: want the rdma-sriov network's address", ep)
		}
	}
	if len(nodes) != 4 {
		t.Errorf("pods on %d nodes, want 4 (anti-affinity and avoidPools)", len(nodes))
	}
	tests := map[string]bool{}
	for _, res := range r.rep.Results {
		tests[res.Test] = true
		if res.Test == "nccl-sendrecv" {
			if res.Verdict == report.VerdictSkipped {
				t.Errorf("nccl-sendrecv skipped (%q): the pods' placeholder GPUs were not seen", res.Reason)
			} else if res.Verdict != report.VerdictPass {
				t.Logf("nccl-sendrecv: %s %q (the NCCL launcher across pods is branch nccl's)", res.Verdict, res.Reason)
			}
			continue
		}
		if res.Verdict != report.VerdictSkipped || res.Reason == "" {
			t.Errorf("%s: %s %q; want skipped with a reason", res.Test, res.Verdict, res.Reason)
		}
	}
	for _, name := range []string{"rping", "write-bw", "kv-read", "nccl-sendrecv"} {
		if !tests[name] {
			t.Errorf("no result for %s", name)
		}
	}
	if !strings.Contains(r.stderr, "4/4 pods ready") {
		t.Error("no readiness progress on stderr")
	}
	assertNothingLeft(t, c)
}
