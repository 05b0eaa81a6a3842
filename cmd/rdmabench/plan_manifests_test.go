package main

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
	corev1 "k8s.io/api/core/v1"
)

// plan -o manifests prints every object run creates for pd-disagg, read
// strictly as kubectl apply --dry-run=client reads them: the namespace, the
// run's ConfigMap, the four endpoint pods with their placement, and the
// etcd pod and Service nixlbench needs.
func TestPlanManifestsDecodeStrictly(t *testing.T) {
	code, out, errs := runCLI(t, "", "plan", "../../scenarios/pd-disagg.yaml", "-o", "manifests", "-n", "bench")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	docs, err := kube.DecodeManifest([]byte(out))
	if err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	kinds := map[string]int{}
	var pods []*corev1.Pod
	for _, d := range docs {
		obj := d.Object
		kinds[d.Kind]++
		if p, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, p)
			if p.Namespace != "bench" {
				t.Errorf("pod %s in %q, want -n bench", p.Name, p.Namespace)
			}
		}
	}
	if kinds["Namespace"] != 1 || kinds["ConfigMap"] != 1 || kinds["Pod"] != 5 || kinds["Service"] != 1 {
		t.Fatalf("kinds %v: want a namespace, a ConfigMap, 4 endpoint pods + the etcd pod, its Service", kinds)
	}
	first := pods[0]
	if first.Annotations["k8s.v1.cni.cncf.io/networks"] != "rdma-sriov" || first.Spec.Affinity == nil ||
		first.Spec.Containers[0].Resources.Limits.Name("rdma/roce_gdr", "") == nil {
		t.Errorf("endpoint pod lacks its placement: %+v", first)
	}
	// Every test of a pd-disagg pod runs in its one container, from the
	// serving image, given the GPU and the RDMA device; the init container
	// (the tools image) brings the bundle.
	if cs, is := first.Spec.Containers, first.Spec.InitContainers; len(cs) != 1 || cs[0].Image != "registry.example.com/you/serving:latest" ||
		cs[0].Resources.Limits.Name("nvidia.com/gpu", "").Value() != 1 || len(is) != 1 || is[0].Image != "quay.io/rdmabench/tools:latest" {
		t.Errorf("endpoint pod containers %+v, init %+v: want one from the serving image with the GPU, the tools image's init", cs, is)
	}
	if code, _, errs := runCLI(t, "", "plan", "../../scenarios/loopback.yaml", "-o", "manifests"); code != 2 || !strings.Contains(errs, "backend: kube") {
		t.Errorf("a local scenario: exit %d %q; want 2 saying manifests are for kube", code, errs)
	}
}
