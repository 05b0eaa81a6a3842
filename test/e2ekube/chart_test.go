package e2ekube

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/rdmabench/rdmabench/deploy/chart"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// TestHelmChartInstallsOnOpenShift: the Helm chart, rendered as `helm
// install` renders it for this cluster (the API versions its discovery serves,
// which serves security.openshift.io/v1 once the lane's SCC API is up), is
// created object by object with strict field validation: the ServiceAccount,
// Role and binding, the SCC and its grant, the namespace role and its
// admission policy, the scenario's ConfigMap, the results claim and the
// CronJob. Before, a benchmark pod of the chart's scenario is refused to the
// ServiceAccount (restricted-v2); after, the chart's grant admits it (a
// server-side dry run as the account).
func TestHelmChartInstallsOnOpenShift(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	undo, err := c.ServeOpenShiftSecurity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := undo(context.Background()); err != nil {
			t.Error(err)
		}
	})
	const ns = "e2e-chart"
	createNamespace(t, c, ns)
	apis, err := chart.APIVersions(c.Client().Discovery())
	if err != nil {
		t.Fatal(err)
	}
	r, err := chart.Render(chart.Dir(), chart.Options{Release: "nightly", Namespace: ns, APIVersions: apis,
		Values: map[string]any{"namespaceRole": map[string]any{"enabled": true},
			"push": map[string]any{"url": "http://pushgateway.monitoring.svc:9091"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm install would create: %s", strings.Join(r.Kinds, ", "))
	if !slices.Contains(r.Kinds, "SecurityContextConstraints") {
		t.Fatalf("no SCC although the cluster serves security.openshift.io/v1 (%d API versions seen)", len(apis))
	}

	account := asServiceAccount(t, c, ns, "rdmabench")
	pod := chartScenarioPod(t, ns)
	if _, err := account.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Fatalf("pod %s admitted before the chart was installed", pod.Name)
	}

	objs, err := c.Apply(ctx, []byte(r.Manifest))
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), objs); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatalf("apply the chart: %v", err)
	}
	if len(objs) != len(r.Kinds) {
		t.Errorf("created %d objects of %d", len(objs), len(r.Kinds))
	}
	if _, err := account.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("pod %s refused with the chart installed: %v", pod.Name, err)
	}
	cj, err := c.Client().BatchV1().CronJobs(ns).Get(ctx, "rdmabench-kube-check", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := cj.Spec.JobTemplate.Spec.Template.Spec; s.ServiceAccountName != "rdmabench" || s.Containers[0].Command[2] != kube.CronJobScript {
		t.Errorf("CronJob as stored: account %q, script:\n%s", s.ServiceAccountName, s.Containers[0].Command[2])
	}
}

// asServiceAccount is a client that acts as the namespace's account.
func asServiceAccount(t *testing.T, c *cluster.Cluster, ns, name string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.Impersonate.UserName = "system:serviceaccount:" + ns + ":" + name
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// chartScenarioPod is a benchmark pod of the chart's default scenario
// (kube-check), as `plan -o manifests` prints it for the namespace.
func chartScenarioPod(t *testing.T, ns string) *corev1.Pod {
	t.Helper()
	out, err := runCmd(t, "plan", "../../deploy/chart/rdmabench/files/kube-check.yaml", "-o", "manifests", "-n", ns)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	docs, err := kube.DecodeManifest([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if p, ok := d.Object.(*corev1.Pod); ok {
			return p
		}
	}
	t.Fatalf("no pod in\n%s", out)
	return nil
}
