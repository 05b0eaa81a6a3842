package scenarios

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const minimal = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: m}
pools:
  - name: a
    replicas: 2
  - name: b
    replicas: 2
tests:
`

func mustDecode(t *testing.T, text string) *Scenario {
	t.Helper()
	s, err := Decode("t.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDefaultsFillUnset(t *testing.T) {
	s := mustDecode(t, minimal+"  - {name: t1, tool: ib_write_bw, from: a}\n")
	if s.Backend != "" || s.Pools[0].Replicas == nil || s.Tests[0].Pattern != "" {
		t.Fatalf("Decode must not default: %+v", s)
	}
	ApplyDefaults(s)
	tt := s.Tests[0]
	if s.Backend != BackendLocal || s.Cluster != nil || tt.Pattern != PatternPairwise || tt.To != "a" ||
		*tt.Repetitions != 1 || tt.Requires != RequiresRDMA || tt.Timeout.IsSet() {
		t.Errorf("defaults: backend %q cluster %v test %+v", s.Backend, s.Cluster, tt)
	}
	if s.Positions.Has("tests[0].pattern") || !s.Positions.Has("tests[0].from") {
		t.Errorf("positions must tell written from defaulted")
	}
}

func TestDefaultsKeepWrittenValues(t *testing.T) {
	s := mustDecode(t, `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: m}
backend: kube
cluster: {image: img, namespace: perf, capabilities: []}
defaults: {repetitions: 3, timeout: 90s}
pools: [{name: a, replicas: 4}]
tests:
  - {name: t1, tool: ib_write_bw, from: a, pattern: ring, repetitions: 2, timeout: 10s}
  - {name: t2, tool: iperf3, from: a}
`)
	ApplyDefaults(s)
	c := s.Cluster
	if c.Namespace != "perf" || c.AntiAffinity != DefaultAntiAffinity || c.Capabilities == nil || len(c.Capabilities) != 0 {
		t.Errorf("cluster %+v: explicit [] capabilities must stay empty", c)
	}
	t1, t2 := s.Tests[0], s.Tests[1]
	if t1.Pattern != PatternRing || *t1.Repetitions != 2 || t1.Timeout.Raw != "10s" {
		t.Errorf("t1 %+v", t1)
	}
	if *t2.Repetitions != 3 || t2.Timeout.Raw != "90s" || t2.Requires != RequiresTCP {
		t.Errorf("t2 %+v", t2)
	}
	if err := Validate(s); err != nil {
		t.Fatal(err)
	}
	if t2 := s.Tests[1]; t2.Timeout.Value != 90*time.Second {
		t.Errorf("validation parses durations: %v", t2.Timeout.Value)
	}
}

func TestDefaultKubeCluster(t *testing.T) {
	s := &Scenario{Backend: BackendKube}
	ApplyDefaults(s)
	if s.Cluster == nil || s.Cluster.Namespace != DefaultNamespace || s.Cluster.AntiAffinity != "kubernetes.io/hostname" ||
		!slices.Equal(s.Cluster.Capabilities, []string{"IPC_LOCK"}) {
		t.Errorf("kube cluster defaults: %+v", s.Cluster)
	}
}

// What each tool requires by default: RDMA tools need a device, TCP-only
// UCX and iperf3 do not.
func TestDefaultRequires(t *testing.T) {
	for _, c := range []struct{ tool, transports, want string }{
		{ToolIBWriteBW, "", RequiresRDMA},
		{ToolIBSendLat, "", RequiresRDMA},
		{ToolRping, "", RequiresRDMA},
		{ToolNCCL, "", ""}, // decided by placement: one host needs no NIC
		{ToolNixlbench, "", RequiresRDMA},
		{ToolNixlbench, "tcp", RequiresTCP},
		{ToolUCXPerftest, "", RequiresRDMA},
		{ToolUCXPerftest, "tcp", RequiresTCP},
		{ToolUCXPerftest, "tcp,self,sm", RequiresTCP},
		{ToolUCXPerftest, "rc,tcp", RequiresRDMA},
		{ToolIperf3, "", RequiresTCP},
	} {
		tt := &Test{Tool: c.tool, Args: Args{Transports: c.transports}}
		defaultTest(tt, &Defaults{})
		if tt.Requires != c.want {
			t.Errorf("%s transports %q: requires %q, want %q", c.tool, c.transports, tt.Requires, c.want)
		}
	}
}

func TestDefaultToolArgs(t *testing.T) {
	n := &Test{Tool: ToolNixlbench}
	defaultTest(n, &Defaults{})
	if n.Args.Backend != "UCX" || n.Args.Op != "WRITE" || n.Args.InitiatorSeg != "DRAM" || n.Args.TargetSeg != "DRAM" {
		t.Errorf("nixlbench defaults %+v", n.Args)
	}
	cmp := &Test{Tool: ToolNixlbench, Args: Args{Backends: []string{"UCX", "UCCL"}}}
	defaultTest(cmp, &Defaults{})
	if cmp.Args.Backend != "" {
		t.Errorf("backends given: backend must stay unset, got %q", cmp.Args.Backend)
	}
	u := &Test{Tool: ToolUCXPerftest}
	defaultTest(u, &Defaults{})
	if u.Args.Test != "tag_bw" {
		t.Errorf("ucx_perftest test %q", u.Args.Test)
	}
	nc := &Test{Tool: "alltoall_perf", From: "a"}
	defaultTest(nc, &Defaults{})
	if nc.Tool != ToolNCCL || nc.Args.Collective != "alltoall" || nc.Pattern != "" || nc.To != "" {
		t.Errorf("nccl-tests binary name: %+v", nc)
	}
}

// ApplyDefaults runs before validation on anything Decode let through.
func TestDefaultsNeverPanic(t *testing.T) {
	ApplyDefaults(&Scenario{})
	ApplyDefaults(&Scenario{Backend: "kube", Pools: make([]Pool, 3), Tests: make([]Test, 3)})
	s := &Scenario{Tests: []Test{{Tool: "nccl"}}}
	ApplyDefaults(s)
	err := Validate(s)
	if err == nil || !strings.Contains(err.Error(), "metadata.name") {
		t.Errorf("a scenario built in code validates with positions 1:1: %v", err)
	}
}

// A scenario built in code (no positions) is validated on its values:
// units are parsed and arguments a tool does not read are reported.
func TestValidateBuiltInCode(t *testing.T) {
	s := &Scenario{
		Metadata: Metadata{Name: "code"},
		Pools:    []Pool{{Name: "a"}, {Name: "b"}},
		Tests: []Test{
			{Name: "bw", Tool: ToolIBWriteBW, From: "a", To: "b", Args: Args{Sizes: []Size{{Raw: "64KiB"}}, Duration: Duration{Raw: "5s"}}},
			{Name: "ping", Tool: ToolRping, From: "a", To: "b", Args: Args{QPs: 2}},
		},
	}
	ApplyDefaults(s)
	err := Validate(s)
	if s.Tests[0].Args.Sizes[0].Bytes != 64<<10 || s.Tests[0].Args.Duration.Value != 5*time.Second {
		t.Errorf("values not parsed: %+v", s.Tests[0].Args)
	}
	if err == nil || err.Error() != "tests[1].args.qps: qps means nothing for rping (rping reads args: sizes, count, crossRails, extra)" {
		t.Errorf("got %v", err)
	}
}
