package plan

import (
	"slices"
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
