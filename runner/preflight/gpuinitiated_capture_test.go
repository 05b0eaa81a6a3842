package preflight

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// capturedIBGDAEvidence is what the gpu-initiated check read on 4×H100
// without an RDMA NIC (testdata/gpu/h100-deepep/pair, README there).
const capturedIBGDAEvidence = `GPU-initiated RDMA: none; RegistryDwords "" (no PeerMappingOverride), GrdmaPciTopoCheckOverride 0; ` +
	`GPU memory registration: dma-buf; /dev/gdrdrv: missing; NVSHMEM 3.4.5; SYS_RAWIO held; ` +
	`NCCL 2.28.9: GIN (DeepEP V2) needs 2.30.4+; uvm_disable_hmm N; RmProfilingAdminOnly 0`

// TestGPUInitiatedH100Capture replays `rdmabench preflight
// deepep-ibgda.yaml` as read on that host (preflight-ibgda.json): the
// verdict none with every fact and both fixes, the check dooming the
// tool, the other checks passing; versions' NCCL is the loader's system
// libnccl (2.28.3), not the pip wheel torch loads (2.28.9, in the
// evidence). Put through today's one-host rule (the local backend), the
// same check is a warning that keeps the evidence and the fix and dooms
// nothing.
func TestGPUInitiatedH100Capture(t *testing.T) {
	b, err := os.ReadFile("../../testdata/gpu/h100-deepep/pair/preflight-ibgda.json")
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Preflight []schema.PreflightEndpoint `json:"preflight"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Preflight) != 1 || out.Preflight[0].Endpoint != "ep-0" || out.Preflight[0].Versions[schema.FingerprintNCCL] != "2.28.3" {
		t.Fatalf("preflight %+v", out.Preflight)
	}
	var gi *schema.PreflightCheck
	for i, c := range out.Preflight[0].Checks {
		if c.ID == tools.GPUInitiatedID {
			gi = &out.Preflight[0].Checks[i]
		} else if c.Status != schema.PreflightPass {
			t.Errorf("%s: %s %q", c.ID, c.Status, c.Evidence)
		}
	}
	if gi == nil {
		t.Fatalf("no %s check in %+v", tools.GPUInitiatedID, out.Preflight[0].Checks)
	}
	if gi.Status != schema.PreflightFail || gi.Dooms != schema.DoomsTool || gi.Evidence != capturedIBGDAEvidence {
		t.Errorf("captured check %s (dooms %q): %q", gi.Status, gi.Dooms, gi.Evidence)
	}
	for _, fix := range []string{`NVreg_RegistryDwords="PeerMappingOverride=1;"`, "gdrdrv", "NVIDIA_GDRCOPY=enabled"} {
		if !strings.Contains(gi.Fix, fix) {
			t.Errorf("fix lacks %q: %q", fix, gi.Fix)
		}
	}
	needs := Needs{Probes: []string{tools.GPUInitiatedID}}
	if _, doomed := Doomed(out.Preflight[0], needs); !doomed {
		t.Error("as captured, the check does not doom the DeepEP test")
	}
	units := []*preflightUnit{{ep: endpoint.Endpoint{Name: "ep-0"}, probeTests: map[string][]string{tools.GPUInitiatedID: {"deepep-ll"}}}}
	uses := map[string]*testUse{"deepep-ll": {at: map[string]bool{"ep-0": true}}}
	markOneHost(out.Preflight, map[string]int{"ep-0": 0}, units, uses, &localShells{}, []endpoint.Endpoint{{Name: "ep-0"}})
	if gi.Status != schema.PreflightWarn || !strings.HasPrefix(gi.Evidence, capturedIBGDAEvidence+" (not needed here: every rank of deepep-ll shares one host") || gi.Fix == "" {
		t.Errorf("one host: %s %q (fix %q)", gi.Status, gi.Evidence, gi.Fix)
	}
	if _, doomed := Doomed(out.Preflight[0], needs); doomed {
		t.Error("one host: the warning still dooms the test")
	}
	t.Logf("captured: fail, %s; one host now: %s", capturedIBGDAEvidence, gi.Status)
}
