package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/tool"

	"gopkg.in/yaml.v3"
)

// Every shipped scenario (on disk and embedded) loads without a problem.
func TestShippedScenariosValidate(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("want at least 4 shipped scenarios, found %v (%v)", files, err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s does not validate:\n%v", f, err)
		}
	}
	emb := ShippedScenarios()
	if len(emb) != len(files) {
		t.Fatalf("embedded %d scenarios, %d on disk", len(emb), len(files))
	}
	for _, s := range emb {
		disk, err := os.ReadFile(s.Name + ".yaml")
		if err != nil || string(disk) != string(s.Data) {
			t.Errorf("embedded %s differs from the file on disk (%v)", s.Name, err)
		}
		if s.Description == "" {
			t.Errorf("%s has no metadata.description (rdmabench init lists it)", s.Name)
		}
	}
}

// The shipped scenarios are what the issue asks for: check the parts other
// packages and the docs (docs/user-guide/scenarios.md) rely on.
func TestShippedScenarioShapes(t *testing.T) {
	pd, err := Load("pd-disagg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pd.Backend != BackendKube || len(pd.Pools) != 2 || *pd.Pools[0].Replicas != 2 || *pd.Pools[1].Replicas != 2 {
		t.Errorf("pd-disagg: backend %q pools %+v", pd.Backend, pd.Pools)
	}
	tools := map[string]*Test{}
	for i := range pd.Tests {
		tools[pd.Tests[i].Tool] = &pd.Tests[i]
	}
	// The serving image's own NIXL and NCCL (the probes): nothing to build.
	for _, want := range []string{ToolRping, ToolIBWriteBW, tool.NixlProbe, tool.NCCLProbe} {
		if tools[want] == nil {
			t.Errorf("pd-disagg has no %s test", want)
		}
	}
	if n := tools[tool.NixlProbe]; n != nil && (n.Args.Op != "READ" || n.From != "decode" || n.To != "prefill" || n.Args.InitiatorSeg != "VRAM") {
		t.Errorf("pd-disagg nixl_probe: %+v", n)
	}
	lb, err := Load("loopback.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]string{}
	for _, tt := range lb.Tests {
		req[tt.Tool] = tt.Requires
	}
	want := map[string]string{ToolRping: "rdma", ToolIBWriteBW: "rdma", ToolIBSendLat: "rdma", ToolUCXPerftest: "tcp", ToolIperf3: "tcp"}
	for tool, r := range want {
		if req[tool] != r {
			t.Errorf("loopback %s requires %q, want %q", tool, req[tool], r)
		}
	}
	if lb.Backend != BackendLocal || !lb.LineRate.Auto {
		t.Errorf("loopback: backend %q lineRate %+v", lb.Backend, lb.LineRate)
	}
}

// A loaded scenario rendered back to YAML (as a run saves it with its
// results) loads again to the same scenario: the defaults are explicit
// values that validate.
func TestRenderedScenarioRoundTrips(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := yaml.Marshal(s)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		again, err := LoadBytes("rendered-"+f, out)
		if err != nil {
			t.Fatalf("%s rendered does not load:\n%v\n%s", f, err, out)
		}
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Errorf("%s changed on the round trip:\n%s\n%s", f, a, b)
		}
	}
}

// No shipped scenario hides NCCL's INIT/NET log: it is the transport's
// evidence (NET/IB or NET/Socket), and rdmabench sets NCCL_DEBUG=INFO with
// NCCL_DEBUG_SUBSYS=INIT,NET where the scenario leaves it unset.
func TestShippedScenariosKeepNCCLLog(t *testing.T) {
	for _, s := range ShippedScenarios() {
		sc, err := LoadBytes(s.Name+".yaml", s.Data)
		if err != nil {
			t.Fatal(err)
		}
		envs := []map[string]string{sc.Defaults.Env}
		for i := range sc.Pools {
			envs = append(envs, sc.Pools[i].Env)
		}
		for i := range sc.Tests {
			envs = append(envs, sc.Tests[i].Env)
		}
		for _, env := range envs {
			if v, ok := env["NCCL_DEBUG"]; ok && v != "INFO" && v != "TRACE" {
				t.Errorf("%s sets NCCL_DEBUG=%s: it hides the INIT/NET lines that name the transport", s.Name, v)
			}
			if v, ok := env["NCCL_DEBUG_SUBSYS"]; ok && (!strings.Contains(v, "INIT") || !strings.Contains(v, "NET")) && v != "ALL" {
				t.Errorf("%s sets NCCL_DEBUG_SUBSYS=%s without INIT and NET", s.Name, v)
			}
		}
	}
}

// Every shipped kube scenario names the ServiceAccount of deploy/rbac.yaml
// (docs/user-guide/kubernetes.md says they all do): on OpenShift the SCC is
// granted to it, and the default ServiceAccount has none.
func TestShippedScenariosNameServiceAccount(t *testing.T) {
	for _, s := range ShippedScenarios() {
		sc, err := LoadBytes(s.Name+".yaml", s.Data)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Backend == BackendKube && (sc.Cluster == nil || sc.Cluster.ServiceAccount != "rdmabench") {
			t.Errorf("%s: cluster.serviceAccount is not rdmabench", s.Name)
		}
	}
}
