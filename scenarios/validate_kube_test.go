package scenarios

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A kube scenario that sets every pod field loads, keeps what was written
// (Kubernetes defaults stay Kubernetes'), and survives the rendered round trip
// a run saves with its results.
func TestKubeScenarioAllPodFields(t *testing.T) {
	s, err := Load("testdata/valid/kube-all-fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cluster
	if c.ImagePullPolicy != "IfNotPresent" || strings.Join(c.ImagePullSecrets, ",") != "regcred,registry.example.com-pull" ||
		c.RuntimeClassName != "nvidia" || c.PriorityClassName != "benchmark-low" || c.HostNetwork {
		t.Errorf("cluster: %+v", c)
	}
	if len(c.Tolerations) != 2 || c.Tolerations[1].TolerationSeconds == nil || *c.Tolerations[1].TolerationSeconds != 30 ||
		c.Tolerations[0].Operator != "Exists" || c.Tolerations[0].Effect != "NoSchedule" {
		t.Errorf("cluster tolerations: %+v", c.Tolerations)
	}
	if c.Labels["team"] != "llm-serving" || c.Labels["tier"] != "" || len(c.Labels) != 3 || c.Annotations["sidecar.istio.io/inject"] != "false" {
		t.Errorf("labels %v annotations %v", c.Labels, c.Annotations)
	}
	if tl := s.Pools[0].Tolerations; len(tl) != 1 || tl[0].Operator != "" || tl[0].Value != "prefill" {
		t.Errorf("prefill tolerations: %+v (the operator stays unset: Kubernetes reads it as Equal)", tl)
	}
	if tl := s.Pools[1].Tolerations; len(tl) != 1 || tl[0].Key != "" || tl[0].Operator != "Exists" {
		t.Errorf("decode tolerations: %+v", tl)
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadBytes("rendered.yaml", out)
	if err != nil {
		t.Fatalf("rendered does not load:\n%v\n%s", err, out)
	}
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("changed on the round trip:\n%s\n%s", a, b)
	}
}

// A scenario built in code (no positions) gets the same checks, in a
// stable order.
func TestValidatePodFieldsBuiltInCode(t *testing.T) {
	secs := 10
	s := &Scenario{
		Metadata: Metadata{Name: "code"},
		Backend:  BackendKube,
		Cluster: &Cluster{
			Image: "x", HostNetwork: true, Networks: []string{"rdma"}, ImagePullPolicy: "always",
			Labels:      map[string]string{"rdmabench.io/pool": "a", "b": "-", "a": "ok"},
			Annotations: map[string]string{"k8s.v1.cni.cncf.io/networks": "rdma"},
			Tolerations: []Toleration{{Key: "k", Effect: "NoSchedule", TolerationSeconds: &secs}},
		},
		Pools: []Pool{{Name: "a", Replicas: intPtr(2)}},
		Tests: []Test{{Name: "bw", Tool: ToolRping, From: "a"}},
	}
	ApplyDefaults(s)
	err := Validate(s)
	if err == nil {
		t.Fatal("want errors")
	}
	want := []string{
		`cluster.imagePullPolicy: unknown imagePullPolicy value "always" (did you mean "Always"?`,
		"cluster.tolerations[0].tolerationSeconds: tolerationSeconds applies only to effect NoExecute",
		"cluster.labels.b: ",
		"cluster.labels.rdmabench.io/pool: the rdmabench.io/ prefix is reserved",
		"cluster.annotations.k8s.v1.cni.cncf.io/networks: ",
		"cluster.networks: ",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d: %q does not start with %q", i, lines[i], w)
		}
	}
	if again := Validate(s); again.Error() != err.Error() {
		t.Errorf("order changed between two validations:\n%v\n%v", err, again)
	}
}
