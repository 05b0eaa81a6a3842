package e2ekube

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// The in-cluster schedule: `plan -o cronjob` applied as printed, then its
// Job run twice, as `kubectl create job --from=cronjob/…` makes it (the
// test cluster has no CronJob controller; the Job controller is real).
// The first night has no baseline (compare's exit 4, which the script
// tolerates): the Job succeeds and its run lands in the results folder.
// Then the first run is doctored to have been ten times faster: the second
// Job's compare finds the regression, and the Job fails with exit code 1.
//
// What the test agent cannot do is adapted in the Job's pod spec, here and
// nowhere else: it has no volumes (the ConfigMap's scenario and the results
// PVC become a host folder, through the SCENARIO_FILE and RESULTS_DIR the
// script reads), no ServiceAccount token projection (KUBECONFIG points at a
// kubeconfig holding a token of the same ServiceAccount, so the Role is
// still all the run may do), pods in their own network namespace cannot
// reach the apiserver on 127.0.0.1 (hostNetwork), and pods run on the host's
// file system: the lane runs an image named hostImage without a root file
// system of its own (PATH leads to the rdmabench under test).
func TestCronJobRunsNightlyAndFailsOnARegression(t *testing.T) {
	c := needCluster(t)
	const ns = "e2e-cron"
	createNamespace(t, c, ns)
	sc := tcpScenario(ns, "", "")
	sc = sc[:strings.Index(sc, "tests:")] + "tests:\n  - name: iperf3\n    tool: iperf3\n    from: decode\n    to: prefill\n    pattern: many-to-one\n    args: {duration: 1s}\n"
	manifest, err := runCmd(t, "plan", writeScenario(t, sc), "-o", "cronjob", "--image", hostImage)
	if err != nil {
		t.Fatalf("plan -o cronjob: %v\n%s", err, manifest)
	}
	cj := applyCronJobManifest(t, c, manifest)

	host := t.TempDir()
	results := filepath.Join(host, "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig := serviceAccountKubeconfig(t, c, ns, cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName)

	job := runCronJobOnce(t, c, cj, "night-1", host, results, kubeconfig)
	if job.Status.Succeeded != 1 {
		t.Fatalf("first night: Job status %+v; want succeeded (no baseline yet is not a failure)\n%s", job.Status, jobLogs(t, c, job))
	}
	logs := jobLogs(t, c, job)
	t.Logf("first night, Job %s: %+v\n%s", job.Name, job.Status, logs)
	if !strings.Contains(logs, "no baseline yet") {
		t.Errorf("first night's log does not say there was no baseline yet:\n%s", logs)
	}
	runs := runFolders(t, results)
	if len(runs) != 1 || !strings.HasPrefix(filepath.Base(runs[0]), "kube-tcp-") {
		t.Fatalf("run folders after the first night: %v; want one kube-tcp-<time>/report.json", runs)
	}
	assertNothingLeft(t, c)

	// Plant a regression: the first night was, on paper, ten times faster.
	plantFasterBaseline(t, filepath.Join(runs[0], "report.json"), 10)
	time.Sleep(time.Second) // the next run folder is named to the second
	job = runCronJobOnce(t, c, cj, "night-2", host, results, kubeconfig)
	logs = jobLogs(t, c, job)
	t.Logf("second night, Job %s: %+v\n%s", job.Name, job.Status, logs)
	if job.Status.Failed != 1 || job.Status.Succeeded != 0 {
		t.Fatalf("second night: Job status %+v; want failed on the planted regression\n%s", job.Status, logs)
	}
	if code := podExitCode(t, c, job); code != 1 {
		t.Errorf("the Job's container exited %d; want 1 (regression)\n%s", code, logs)
	}
	if !strings.Contains(logs, "baseline: "+filepath.Base(runs[0])) && !strings.Contains(logs, runs[0]) {
		t.Errorf("compare did not pick the first night as the baseline:\n%s", logs)
	}
	runs = runFolders(t, results)
	if len(runs) != 2 {
		t.Fatalf("run folders after the second night: %v; want 2", runs)
	}
	if _, err := os.Stat(filepath.Join(runs[1], "compare.xml")); err != nil {
		t.Errorf("no JUnit from the second night's compare: %v", err)
	}
	assertNothingLeft(t, c)
}

// applyCronJobManifest creates every object `plan -o cronjob` printed,
// decoded strictly, and returns the CronJob.
func applyCronJobManifest(t *testing.T, c *cluster.Cluster, manifest string) *batchv1.CronJob {
	t.Helper()
	ctx := context.Background()
	cs := c.Client()
	docs, err := kube.DecodeManifest([]byte(manifest))
	if err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	var cj *batchv1.CronJob
	for _, d := range docs {
		obj := d.Object
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.PersistentVolumeClaim: // stays Pending: no provisioner here, and the Job uses a host folder
			_, err = cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *batchv1.CronJob:
			cj, err = cs.BatchV1().CronJobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("unexpected %T in the manifest", obj)
		}
		if err != nil {
			t.Fatalf("create %T: %v", obj, err)
		}
	}
	if cj == nil {
		t.Fatal("no CronJob in the manifest")
	}
	return cj
}

// runCronJobOnce creates a Job from the CronJob's jobTemplate as `kubectl
// create job --from=cronjob/NAME` does, with the test agent's adaptations
// (see the test), and waits for the Job controller's verdict.
func runCronJobOnce(t *testing.T, c *cluster.Cluster, cj *batchv1.CronJob, name, host, results, kubeconfig string) *batchv1.Job {
	t.Helper()
	ctx := context.Background()
	cm, err := c.Client().CoreV1().ConfigMaps(cj.Namespace).Get(ctx, cj.Spec.JobTemplate.Spec.Template.Spec.Volumes[0].ConfigMap.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: cj.Name + "-" + name, Namespace: cj.Namespace,
			Labels:          cj.Spec.JobTemplate.Labels,
			Annotations:     map[string]string{"cronjob.kubernetes.io/instantiate": "manual"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	pod := &job.Spec.Template.Spec
	// Adaptations for the test agent: host network, a host folder for
	// the ConfigMap and the PVC, a kubeconfig for the token, PATH.
	pod.HostNetwork = true
	scenarioDir := filepath.Join(host, "scenario")
	if err := os.MkdirAll(scenarioDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, text := range cm.Data {
		if err := os.WriteFile(filepath.Join(scenarioDir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pod.Volumes = nil
	ct := &pod.Containers[0]
	ct.VolumeMounts = nil
	for i, e := range ct.Env {
		switch e.Name {
		case "SCENARIO_FILE":
			ct.Env[i].Value = filepath.Join(scenarioDir, filepath.Base(e.Value))
		case "RESULTS_DIR":
			ct.Env[i].Value = results
		}
	}
	ct.Env = append(ct.Env,
		corev1.EnvVar{Name: "KUBECONFIG", Value: kubeconfig},
		corev1.EnvVar{Name: "PATH", Value: filepath.Dir(rdmabench) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"})
	if _, err := c.Client().BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got, err := c.Client().BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if err == nil && jobFinished(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("Job %s not finished after 3 minutes: %+v (%v)\n%s", job.Name, got.Status, err, jobLogs(t, c, job))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func jobFinished(j *batchv1.Job) bool {
	for _, cond := range j.Status.Conditions {
		if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// jobPod is the (only, backoffLimit 0) pod of a Job.
func jobPod(t *testing.T, c *cluster.Cluster, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	pods, err := c.Client().CoreV1().Pods(job.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job.Name})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods of Job %s: %d (%v), want 1", job.Name, len(pods.Items), err)
	}
	return &pods.Items[0]
}

func jobLogs(t *testing.T, c *cluster.Cluster, job *batchv1.Job) string {
	t.Helper()
	pod := jobPod(t, c, job)
	data, err := c.Client().CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return "(logs: " + err.Error() + ")"
	}
	return string(data)
}

func podExitCode(t *testing.T, c *cluster.Cluster, job *batchv1.Job) int32 {
	t.Helper()
	pod := jobPod(t, c, job)
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("pod %s container statuses %+v: want one terminated", pod.Name, pod.Status.ContainerStatuses)
	}
	return pod.Status.ContainerStatuses[0].State.Terminated.ExitCode
}

// runFolders are the folders under dir holding a report.json, in name
// (= time) order.
func runFolders(t *testing.T, dir string) []string {
	t.Helper()
	reports, err := filepath.Glob(filepath.Join(dir, "*", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range reports {
		out = append(out, filepath.Dir(r))
	}
	return out
}

// plantFasterBaseline multiplies every bandwidth figure of a report.json
// (headline, per-size samples, per-size statistics) by factor.
func plantFasterBaseline(t *testing.T, path string, factor float64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	results, _ := rep["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("%s: no results to doctor", path)
	}
	for _, r := range results {
		scaleBandwidth(r, factor)
	}
	if data, err = json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func scaleBandwidth(v any, factor float64) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			scaleBandwidth(e, factor)
		}
	case map[string]any:
		stat := strings.HasSuffix(str(x["metric"]), "_bps")
		for k, e := range x {
			f, isNum := e.(float64)
			switch {
			case isNum && (k == "bestBps" || strings.HasPrefix(k, "bw_") && strings.HasSuffix(k, "_bps")):
				x[k] = f * factor
			case isNum && stat && (k == "mean" || k == "min" || k == "max"):
				x[k] = f * factor
			default:
				scaleBandwidth(e, factor)
			}
		}
	}
}

func str(v any) string { s, _ := v.(string); return s }
