package main

import (
	"os"
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
)

const cronScenario = `apiVersion: rdmabench.io/v1alpha1
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

// plan -o cronjob prints objects kubectl reads strictly (no unknown
// field), with the fields that make it a nightly regression job.
func TestPlanCronJobDecodesStrictly(t *testing.T) {
	path := writeScenario(t, cronScenario)
	code, out, errs := runCLI(t, "", "plan", path, "-o", "cronjob", "--schedule", "30 3 * * *",
		"--image", "registry.example.com/rdmabench:v1", "--results-claim", "fabric-runs", "--storage", "20Gi",
		"--storage-class", "fast-nvme", "--time-zone", "Europe/Paris", "--push", "http://pushgateway.monitoring:9091")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	docs, err := kube.DecodeManifest([]byte(out))
	if err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	var kinds []string
	var (
		sa   *corev1.ServiceAccount
		role *rbacv1.Role
		rb   *rbacv1.RoleBinding
		pvc  *corev1.PersistentVolumeClaim
		cm   *corev1.ConfigMap
		cj   *batchv1.CronJob
	)
	for _, d := range docs {
		obj := d.Object
		kinds = append(kinds, d.Kind)
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			sa = o
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			rb = o
		case *corev1.PersistentVolumeClaim:
			pvc = o
		case *corev1.ConfigMap:
			cm = o
		case *batchv1.CronJob:
			cj = o
		}
	}
	if got := strings.Join(kinds, ","); got != "ServiceAccount,Role,RoleBinding,PersistentVolumeClaim,ConfigMap,CronJob" {
		t.Fatalf("kinds %s", got)
	}
	for _, ns := range []string{sa.Namespace, role.Namespace, rb.Namespace, pvc.Namespace, cm.Namespace, cj.Namespace} {
		if ns != "fabric" {
			t.Errorf("namespace %q, want the scenario's fabric", ns)
		}
	}
	if !reflect.DeepEqual(role.Rules, kube.Rules()) {
		t.Errorf("Role rules %+v, want kube.Rules()", role.Rules)
	}
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != sa.Name || rb.Subjects[0].Namespace != "fabric" {
		t.Errorf("RoleBinding %+v does not bind the Role to the ServiceAccount", rb)
	}
	if pvc.Name != "fabric-runs" || !pvc.Spec.Resources.Requests[corev1.ResourceStorage].Equal(resource.MustParse("20Gi")) ||
		pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "fast-nvme" {
		t.Errorf("PVC %s %v class %v", pvc.Name, pvc.Spec.Resources.Requests, pvc.Spec.StorageClassName)
	}
	scenario, _ := os.ReadFile(path)
	if cm.Data["nightly-tcp.yaml"] != string(scenario) {
		t.Errorf("ConfigMap data %v: want the scenario verbatim under nightly-tcp.yaml", cm.Data)
	}
	s := cj.Spec
	if s.Schedule != "30 3 * * *" || s.TimeZone == nil || *s.TimeZone != "Europe/Paris" || s.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("schedule %q (time zone %v), concurrency %q", s.Schedule, s.TimeZone, s.ConcurrencyPolicy)
	}
	job := s.JobTemplate.Spec
	pod := job.Template.Spec
	if job.BackoffLimit == nil || *job.BackoffLimit != 0 || pod.RestartPolicy != corev1.RestartPolicyNever || pod.ServiceAccountName != sa.Name {
		t.Errorf("job: backoffLimit %v, restartPolicy %q, serviceAccount %q", job.BackoffLimit, pod.RestartPolicy, pod.ServiceAccountName)
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if c.Image != "registry.example.com/rdmabench:v1" || env["SCENARIO_FILE"] != "/scenario/nightly-tcp.yaml" || env["RESULTS_DIR"] != "/results" || env["RUN_NAMESPACE"] != "fabric" ||
		env["PUSHGATEWAY_URL"] != "http://pushgateway.monitoring:9091" {
		t.Errorf("container %s env %v", c.Image, env)
	}
	script := strings.Join(c.Command, " ")
	for _, want := range []string{`rdmabench run "$SCENARIO_FILE" -n "$RUN_NAMESPACE" --out "$run" "$@"`,
		`if [ -n "${PUSHGATEWAY_URL:-}" ]; then set -- --push "$PUSHGATEWAY_URL"; fi`,
		`rdmabench compare --baseline auto "$RESULTS_DIR" "$run" --junit "$run/compare.xml" "$@"`, `"$compared" -eq 4`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	vols := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v.VolumeSource
	}
	if mounts["scenario"] != "/scenario" || mounts["results"] != "/results" ||
		vols["scenario"].ConfigMap == nil || vols["scenario"].ConfigMap.Name != cm.Name ||
		vols["results"].PersistentVolumeClaim == nil || vols["results"].PersistentVolumeClaim.ClaimName != "fabric-runs" {
		t.Errorf("mounts %v volumes %+v", mounts, vols)
	}
}

func TestPlanCronJobRefusals(t *testing.T) {
	local := writeScenario(t, planScenario)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", local, "-o", "cronjob"}, "needs backend: kube"},
		{[]string{"plan", local, "--schedule", "0 1 * * *"}, "--schedule is for -o cronjob"},
		{[]string{"plan", writeScenario(t, cronScenario), "-o", "cronjob", "--schedule", "nightly"}, `schedule "nightly"`},
		{[]string{"plan", writeScenario(t, cronScenario), "-o", "cronjob", "--time-zone", "Mars/Olympus"}, `time zone "Mars/Olympus": not an IANA time zone name`},
		{[]string{"plan", writeScenario(t, cronScenario), "-o", "cronjob", "--storage-class", "Fast_NVMe"}, `storage class "Fast_NVMe"`},
		{[]string{"plan", local, "--time-zone", "Etc/UTC"}, "--time-zone is for -o cronjob"},
		{[]string{"plan", local, "--push", "http://pushgateway:9091"}, "--push is for -o cronjob"},
		{[]string{"plan", writeScenario(t, cronScenario), "-o", "cronjob", "--push", "pushgateway:9091"}, `push URL "pushgateway:9091": want the Pushgateway's http(s)://HOST:PORT`},
	} {
		code, _, errs := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// The image the CronJob names is explained where the manifest is read: what
// it must hold, where the default comes from, how to pin another.
func TestPlanCronJobExplainsImage(t *testing.T) {
	file := writeScenario(t, cronScenario)
	code, out, errs := runCLI(t, "", "plan", file, "-o", "cronjob")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	head := out[:strings.Index(out, "apiVersion:")]
	for _, want := range []string{"# image quay.io/rdmabench/tools:latest", "the tools image", "make image", "--image", "development build"} {
		if !strings.Contains(head, want) {
			t.Errorf("manifest head lacks %q:\n%s", want, head)
		}
	}
	code, out, _ = runCLI(t, "", "plan", file, "-o", "cronjob", "--image", "reg.example.com/rb:v9")
	if code != 0 || !strings.Contains(out, "# image reg.example.com/rb:v9: given with --image") {
		t.Errorf("--image: exit %d, head:\n%s", code, out[:min(len(out), 400)])
	}
}
