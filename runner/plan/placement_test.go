package plan

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// Pools that test each other never share a node unless a scenario says
// so: each avoids the other without avoidPools, shareNodesWith (on either
// side) lifts it; what each pod gets is the pool's over the cluster's.
func TestPlacementKeepsTestedPoolsApart(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: apart}
backend: kube
cluster:
  image: tools:1
  memory: 8Gi
  hugepages: {2Mi: 512Mi}
  resourceClaims: [{name: nic, resourceClaimTemplateName: rdma-nic}]
pools:
  - name: a
  - name: b
    cpu: 500m
    shmSize: 2Gi
    resourceClaims: [{name: gpu, resourceClaimName: shared-gpus}]
  - name: c
    shareNodesWith: [a]
  - name: d
    replicas: 2
tests:
  - {name: ab, tool: iperf3, from: a, to: b}
  - {name: ca, tool: iperf3, from: c, to: a}
  - {name: dd, tool: iperf3, from: d}
`
	sc, err := scenarios.LoadBytes("apart.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	eps, err := Endpoints(sc, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {"a", "b"}, "b": {"b", "a"}, "c": {"c"}, "d": {"d"}}
	for _, ep := range eps {
		p := ep.Placement
		if !slices.Equal(p.AvoidPools, want[ep.Pool]) {
			t.Errorf("%s avoids %v, want %v", ep.Pool, p.AvoidPools, want[ep.Pool])
		}
		if p.Memory != "8Gi" || p.Hugepages["2Mi"] != "512Mi" || p.ResourceClaims[0].TemplateName != "rdma-nic" {
			t.Errorf("%s: %+v: want the cluster's memory, hugepages and claim", ep.Pool, p)
		}
	}
	b := eps[1].Placement
	if b.CPU != "500m" || b.ShmSize != "2Gi" || len(b.ResourceClaims) != 2 || b.ResourceClaims[1].ClaimName != "shared-gpus" {
		t.Errorf("pool b: %+v: want its own cpu and shmSize and both claims", b)
	}
	if a := eps[0].Placement; a.CPU != scenarios.DefaultCPU || a.ShmSize != scenarios.DefaultShmSize {
		t.Errorf("pool a: %+v: want the defaults", a)
	}
}

// perNode puts a pool's endpoints on nodes in groups (ep-0 and ep-1 on
// one node, ep-2 and ep-3 on another): each endpoint names its group, and
// a node's endpoints split the pool's networks among them, the i-th of a
// node getting networks[i·k … i·k+k-1]; one network is every pod's. The
// plan's summary says how many share a node, and that the others are one
// per node.
func TestPlacementPerNodeGroupsAndSplitsRails(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: per-node}
backend: kube
cluster:
  image: tools:1
  networks: [shared]
pools:
  - name: ep
    replicas: 4
    perNode: 2
    gpus: 1
    networks: [rail0, rail1, rail2, rail3]
  - name: one
    replicas: 3
    perNode: 3
  - name: solo
tests:
  - {name: a2a, tool: rping, from: ep, pattern: all-to-all}
  - {name: x, tool: iperf3, from: solo, to: one, pattern: one-to-many}
`
	sc, err := scenarios.LoadBytes("per-node.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(sc, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		group string
		nets  []string
		avoid []string
	}{
		"ep-0":   {"ep-n0", []string{"rail0", "rail1"}, []string{"ep"}},
		"ep-1":   {"ep-n0", []string{"rail2", "rail3"}, []string{"ep"}},
		"ep-2":   {"ep-n1", []string{"rail0", "rail1"}, []string{"ep"}},
		"ep-3":   {"ep-n1", []string{"rail2", "rail3"}, []string{"ep"}},
		"one-0":  {"one-n0", []string{"shared"}, []string{"one", "solo"}},
		"one-2":  {"one-n0", []string{"shared"}, []string{"one", "solo"}},
		"solo-0": {"", []string{"shared"}, []string{"solo", "one"}},
	}
	for _, ep := range p.Endpoints {
		w, ok := want[ep.Name]
		if !ok {
			continue
		}
		pl := ep.Placement
		if pl.NodeGroup != w.group || !slices.Equal(pl.Networks, w.nets) || !slices.Equal(pl.AvoidPools, w.avoid) || pl.Resources["nvidia.com/gpu"] != map[bool]string{true: "1"}[ep.Pool == "ep"] {
			t.Errorf("%s: group %q networks %v avoids %v resources %v; want %q %v %v", ep.Name, pl.NodeGroup, pl.Networks, pl.AvoidPools, pl.Resources, w.group, w.nets, w.avoid)
		}
	}
	var out bytes.Buffer
	if err := WriteSummary(&out, p); err != nil {
		t.Fatal(err)
	}
	line := "  pods per node    ep 2 on each of 2 nodes, one 3 on each of 1 node, others 1 (anti-affinity on kubernetes.io/hostname; a node's pods held together by pod affinity)\n"
	if !strings.Contains(out.String(), line) {
		t.Errorf("summary lacks %q:\n%s", line, out.String())
	}
}

// Where every pool shares nodes, the summary names no others.
func TestSummaryPerNodeEveryPool(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: per-node}
backend: kube
cluster: {image: tools:1}
pools:
  - {name: ep, replicas: 8, perNode: 2}
tests:
  - {name: a2a, tool: rping, from: ep, pattern: all-to-all}
`
	sc, err := scenarios.LoadBytes("per-node.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(sc, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteSummary(&out, p); err != nil {
		t.Fatal(err)
	}
	if line := "  pods per node    ep 2 on each of 4 nodes (anti-affinity on kubernetes.io/hostname; a node's pods held together by pod affinity)\n"; !strings.Contains(out.String(), line) {
		t.Errorf("summary lacks %q:\n%s", line, out.String())
	}
}

// TestGPUsAsTheNamedResource: a pool's gpus become nvidia.com/gpu only
// where no GPU resource is named: amd.com/gpu or a MIG slice is the pod's
// GPUs (nvidia.com/gpu beside it would ask for two kinds), and an RDMA
// resource under nvidia.com/ is not a GPU.
func TestGPUsAsTheNamedResource(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: gpus}
backend: kube
cluster:
  image: serving:1
  resources: {nvidia.com/sriov_rdma: "1"}
pools:
  - {name: amd, gpus: 1, resources: {amd.com/gpu: "1"}}
  - {name: mig, gpus: 1, resources: {nvidia.com/mig-1g.10gb: "1"}}
  - {name: nv, gpus: 2}
tests:
  - {name: t, tool: iperf3, from: amd, to: nv}
  - {name: u, tool: iperf3, from: mig, to: nv}
`
	sc, err := scenarios.LoadBytes("gpus.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	eps, err := Endpoints(sc, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"amd": {"nvidia.com/sriov_rdma": "1", "amd.com/gpu": "1"},
		"mig": {"nvidia.com/sriov_rdma": "1", "nvidia.com/mig-1g.10gb": "1"},
		"nv":  {"nvidia.com/sriov_rdma": "1", "nvidia.com/gpu": "2"},
	}
	for _, ep := range eps {
		if got := ep.Placement.Resources; !maps.Equal(got, want[ep.Pool]) {
			t.Errorf("%s: resources %v, want %v", ep.Pool, got, want[ep.Pool])
		}
	}
}
