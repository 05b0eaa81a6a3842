package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
)

const customScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: nightly-tcp
backend: kube
cluster:
  namespace: fabric
  image: registry.example.com/rdmabench/tools:v1
pools:
  - name: a
  - name: b
tests:
  - name: iperf3
    tool: iperf3
    from: a
    to: b
    args:
      duration: 3s
`

// The chart installs what plan -o cronjob prints, object for object and
// field for field, for the same settings: the ServiceAccount, the Role
// (kube.Rules()), its binding, the results claim, the scenario's ConfigMap
// and the CronJob with kube.CronJobScript. The chart adds only Helm's
// labels and keeps the results claim on uninstall.
func TestChartAgreesWithPlanCronJob(t *testing.T) {
	kubeCheck, err := os.ReadFile(filepath.Join(repo, "scenarios", "kube-check.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		values map[string]any
		plan   kube.CronJobOptions
	}{
		{"defaults", nil, kube.CronJobOptions{Scenario: "kube-check", ScenarioYAML: kubeCheck, Namespace: "rdmabench",
			Schedule: "0 2 * * *", Image: "quay.io/rdmabench/tools:latest", ResultsClaim: "rdmabench-results", Storage: "10Gi"}},
		{"every value", map[string]any{
			"scenario": customScenario, "schedule": "30 3 * * *", "timeZone": "Europe/Paris",
			"image":   map[string]any{"repository": "registry.example.com/rdmabench", "tag": "v1"},
			"results": map[string]any{"claimName": "fabric-runs", "storage": "20Gi", "storageClass": "fast-nvme"},
			"push":    map[string]any{"url": "http://pushgateway.monitoring.svc:9091"},
		}, kube.CronJobOptions{Scenario: "nightly-tcp", ScenarioYAML: []byte(customScenario), Namespace: "fabric",
			Schedule: "30 3 * * *", TimeZone: "Europe/Paris", Image: "registry.example.com/rdmabench:v1",
			ResultsClaim: "fabric-runs", Storage: "20Gi", StorageClass: "fast-nvme", PushURL: "http://pushgateway.monitoring.svc:9091"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := kube.CronJob(tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			var planned bytes.Buffer
			if err := kube.WriteManifest(&planned, objs); err != nil {
				t.Fatal(err)
			}
			got := mustRender(t, Options{Namespace: tc.plan.Namespace, Values: tc.values})
			if _, err := kube.DecodeManifest([]byte(got.Manifest)); err != nil {
				t.Fatalf("the chart's objects do not decode strictly: %v", err)
			}
			want := byKindName(docs(t, planned.String()))
			have := byKindName(docs(t, got.Manifest))
			if len(have) != len(want) {
				t.Errorf("chart renders %v, plan prints %d objects", got.Kinds, len(want))
			}
			for key, w := range want {
				h, ok := have[key]
				if !ok {
					t.Errorf("the chart has no %s", key)
					continue
				}
				if !reflect.DeepEqual(stripHelm(h), normal(t, w)) {
					hy, _ := yaml.Marshal(h)
					wy, _ := yaml.Marshal(normal(t, w))
					t.Errorf("%s differs:\nchart:\n%s\nplan:\n%s", key, hy, wy)
				}
			}
		})
	}
}

// normal drops plan's empty fields that the chart does not write
// (creationTimestamp: null, status: {}, resources: {}), which mean nothing.
func normal(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	prune(o)
	return o
}

func prune(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if m, ok := x.(map[string]any); (ok && len(m) == 0) || x == nil {
				delete(v, k)
				continue
			}
			prune(x)
		}
	case []any:
		for _, x := range v {
			prune(x)
		}
	}
}

// The chart's copies of the nightly script and of the default scenario are
// the sources' own (go test -update copies them again).
func TestChartFilesAreTheirSources(t *testing.T) {
	kubeCheck, err := os.ReadFile(filepath.Join(repo, "scenarios", "kube-check.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"rdmabench/files/nightly-script":  kube.CronJobScript,
		"rdmabench/files/kube-check.yaml": string(kubeCheck),
	} {
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is not its source (go test ./deploy/chart -update copies it): %v", path, err)
		}
	}
}

// The default install, as helm template prints it, in Helm's install order.
func TestChartDefaultGolden(t *testing.T) {
	r := mustRender(t, Options{Namespace: "rdmabench"})
	if got := strings.Join(r.Kinds, ","); got != "ServiceAccount,ConfigMap,PersistentVolumeClaim,Role,RoleBinding,CronJob" {
		t.Errorf("kinds %s", got)
	}
	golden(t, "default.yaml", r.Manifest)
	golden(t, "default-notes.txt", r.Notes)
}
