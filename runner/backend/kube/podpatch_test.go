package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

const podsScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: pods}
backend: kube
cluster:
  namespace: bench
  image: tools:1
  cpu: "8"
  memory: 16Gi
  shmSize: 4Gi
  hugepages: {2Mi: 1Gi}
  resourceClaims: [{name: nic, resourceClaimTemplateName: rdma-vf}]
  podPatch:
    metadata:
      annotations: {example.com/owner: fabric}
    spec:
      containers:
        - name: tools
          env: [{name: FROM_PATCH, value: "1"}]
        - name: serving
          image: vllm/vllm-openai:v0.9
          command: [sleep, infinity]
pools:
  - name: a
    cpu: 500m
    resourceClaims: [{name: gpu, resourceClaimName: gpus}]
  - name: b
tests:
  - {name: t, tool: iperf3, from: a, to: b}
`

// TestPodGetsItsResourcesAndThePatch: CPU and memory requested = limited
// (Guaranteed QoS), /dev/shm memory-backed and sized, hugepages requested
// and mounted, DRA claims passed through, and the pod patch laid over it
// by name (the tools container gets the env, a sidecar is added).
func TestPodGetsItsResourcesAndThePatch(t *testing.T) {
	sc, err := scenarios.LoadBytes("pods.yaml", []byte(podsScenario))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newTestBackend(t, sc)
	eps, err := plan.Endpoints(sc, plan.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list := CheckScenario(sc, eps); len(list) > 0 {
		t.Fatal(list)
	}
	pod, err := b.podFor(eps[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, sidecar := pod.Spec.Containers[0], pod.Spec.Containers[1]
	if tools.Name != "tools" || sidecar.Name != "serving" || sidecar.Image != "vllm/vllm-openai:v0.9" || len(tools.Env) == 0 ||
		tools.Env[len(tools.Env)-1].Name != "FROM_PATCH" || pod.Annotations["example.com/owner"] != "fabric" {
		t.Fatalf("patch not applied: %+v", pod.Spec.Containers)
	}
	r := tools.Resources
	for name, want := range map[corev1.ResourceName]string{"cpu": "500m", "memory": "16Gi", "hugepages-2Mi": "1Gi"} {
		if q := r.Requests[name]; q.String() != want {
			t.Errorf("request %s = %s, want %s", name, q.String(), want)
		}
		if q := r.Limits[name]; q.String() != want {
			t.Errorf("limit %s = %s, want %s (requests = limits)", name, q.String(), want)
		}
	}
	if len(r.Claims) != 2 || r.Claims[0].Name != "nic" || r.Claims[1].Name != "gpu" || len(pod.Spec.ResourceClaims) != 2 ||
		*pod.Spec.ResourceClaims[0].ResourceClaimTemplateName != "rdma-vf" || *pod.Spec.ResourceClaims[1].ResourceClaimName != "gpus" {
		t.Errorf("claims: %+v / %+v", r.Claims, pod.Spec.ResourceClaims)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
	}
	if v := vols[ShmVolume]; v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory || v.EmptyDir.SizeLimit.String() != "4Gi" {
		t.Errorf("/dev/shm volume %+v", v)
	}
	if v := vols["hugepages-2mi"]; v.EmptyDir == nil || v.EmptyDir.Medium != "HugePages-2Mi" {
		t.Errorf("hugepages volume %+v", v)
	}
	mounts := map[string]string{}
	for _, m := range tools.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts[ShmVolume] != "/dev/shm" || mounts["hugepages-2mi"] != "/dev/hugepages-2Mi" {
		t.Errorf("mounts %v", mounts)
	}
}

// TestPodPatchProblemsArePositioned: a field the Pod API does not have,
// or a change to what rdmabench owns, is a FILE:LINE:COL problem.
func TestPodPatchProblemsArePositioned(t *testing.T) {
	for _, c := range []struct {
		patch, want string
	}{
		{"    spec:\n      containers:\n        - name: tools\n          volumeMount: []\n",
			`pods.yaml:17:11: cluster.podPatch.spec.containers[0].volumeMount: unknown field "spec.containers[0].volumeMount" of the Pod API (see kubectl explain pod.spec.containers.volumeMount)`},
		{"    metadata:\n      name: mine\n",
			"pods.yaml:15:13: cluster.podPatch.metadata.name: the pod's name is rdmabench's (remove it: pods are named rdmabench-<run>-<endpoint>)"},
		{"    metadata:\n      labels: {rdmabench.io/run: other}\n",
			"pods.yaml:15:15: cluster.podPatch.metadata.labels: label rdmabench.io/run is rdmabench's (use cluster.labels for labels of your own)"},
		{"    spec:\n      containers:\n        - name: tools\n          command: [bash]\n",
			"pods.yaml:16:9: cluster.podPatch.spec.containers: the tools container's command is rdmabench's (the tools run beside it through exec) (remove command and args of container \"tools\" from the patch)"},
	} {
		doc := strings.Replace(podsScenario, podsScenario[strings.Index(podsScenario, "  podPatch:\n"):strings.Index(podsScenario, "pools:")],
			"  podPatch:\n"+c.patch, 1)
		sc, err := scenarios.LoadBytes("pods.yaml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		eps, _ := plan.Endpoints(sc, plan.CompileOptions{})
		list := CheckScenario(sc, eps)
		if len(list) != 1 || list[0].Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.patch, list, c.want)
		}
	}
}
