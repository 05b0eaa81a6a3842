package e2ekube

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// iperfOnly is tcpScenario with one iperf3 test, many-to-one.
func iperfOnly(ns, extraCluster string) string {
	sc := tcpScenario(ns, extraCluster, "")
	return sc[:strings.Index(sc, "tests:")] + "tests:\n  - name: iperf3\n    tool: iperf3\n    from: decode\n    to: prefill\n    pattern: many-to-one\n    args: {duration: 1s}\n"
}

// TestPodSecurityAdmission: kube-apiserver's PodSecurity admission plugin
// (on by default) enforces a namespace's level. A namespace labelled
// baseline refuses the run's pods (IPC_LOCK is beyond baseline): the run
// stops before creating any pod, exit 3, with the plugin's words and the
// label command; applied, the same run passes. A namespace the run
// creates carries the level its pods need.
func TestPodSecurityAdmission(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-psa", Labels: map[string]string{kube.PodSecurityEnforce: "baseline"}}}
	if _, err := c.Client().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client().CoreV1().Namespaces().Delete(context.Background(), "e2e-psa", metav1.DeleteOptions{})
	})
	scenario := writeScenario(t, iperfOnly("e2e-psa", ""))
	r := run(t, c, scenario, 2*time.Minute, nil)
	fix := "kubectl label --overwrite namespace e2e-psa pod-security.kubernetes.io/enforce=privileged"
	for _, w := range []string{`violates PodSecurity "baseline:latest"`, `"IPC_LOCK"`, "server-side dry run", "fix: " + fix} {
		if r.code != 3 || !strings.Contains(r.stderr, w) {
			t.Errorf("exit %d; want 3 and %q on stderr", r.code, w)
		}
	}
	assertNothingLeft(t, c)

	// The fix, as printed.
	ns, err := c.Client().CoreV1().Namespaces().Get(ctx, "e2e-psa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels[kube.PodSecurityEnforce] = "privileged"
	if _, err := c.Client().CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = run(t, c, scenario, 3*time.Minute, nil)
	if r.code != 0 || !strings.Contains(r.stderr, "admission: 2 pod(s) admitted by a server-side dry run") {
		t.Fatalf("exit %d after the fix; want 0 and the dry run's admission on stderr", r.code)
	}
	assertNothingLeft(t, c)

	// A namespace the run creates is labelled with what its pods need.
	r = run(t, c, writeScenario(t, iperfOnly("e2e-psa-new", "")), 3*time.Minute, nil, "--keep", "--run-id", "psa-1")
	if r.code != 0 || !strings.Contains(r.stderr, "created namespace e2e-psa-new with PodSecurity level privileged") {
		t.Fatalf("exit %d", r.code)
	}
	created, err := c.Client().CoreV1().Namespaces().Get(ctx, "e2e-psa-new", metav1.GetOptions{})
	if err != nil || created.Labels[kube.PodSecurityEnforce] != "privileged" || created.Labels[kube.PodSecurityWarn] != "privileged" {
		t.Errorf("namespace the run created: %v %v", created.Labels, err)
	}
	if out, err := runCmd(t, "clean", "--kubeconfig", c.Kubeconfig, "--all", "-n", "e2e-psa-new"); err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	assertNothingLeft(t, c)
}

// openShiftScenario runs iperf3 and NCCL across two pods (the MPI
// launcher's sshd in the second, under the capabilities the SCC allows)
// with the ServiceAccount of deploy/rbac.yaml.
const openShiftScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-openshift
backend: kube
cluster:
  namespace: rdmabench
  serviceAccount: rdmabench
  image: rdmabench/tools:test
  networks: [default/data-net]
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 90s
pools:
  - name: prefill
    gpus: 1
  - name: decode
    gpus: 1
    avoidPools: [prefill]
tests:
  - name: iperf3
    tool: iperf3
    from: decode
    to: prefill
    args: {duration: 1s}
  - name: nccl-sendrecv
    tool: nccl
    from: prefill
    to: decode
    timeout: 120s
    args: {collective: sendrecv, minSize: 1KiB, maxSize: 64KiB, stepFactor: 8, iterations: 5}
`

// TestOpenShiftAdmission: the cluster serves the SCC API (discovery shows
// OpenShift) and enforces SCC admission as ValidatingAdmissionPolicies
// (test/kubecluster/cluster/openshift). With deploy/rbac.yaml alone, the
// run, as its ServiceAccount, is refused before any pod exists: exit 3,
// the SCC's words, and `oc apply -f deploy/openshift/`. With that applied,
// the same run passes, NCCL's launcher included (its sshd runs with only
// the capabilities the SCC allows, which the node agent enforces); and
// every shipped kube scenario's manifests are admitted by a server-side
// dry run.
func TestOpenShiftAdmission(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
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
	applyFile(t, c, "../../deploy/rbac.yaml")
	kubeconfig := serviceAccountKubeconfig(t, c, "rdmabench", "rdmabench")
	scenario := writeScenario(t, openShiftScenario)

	r := run(t, c, scenario, 2*time.Minute, nil, "--kubeconfig", kubeconfig)
	for _, w := range []string{"platform: openshift (detected", "unable to validate against any security context constraint",
		`provider "restricted-v2": .containers[tools].capabilities.add: Invalid value: "IPC_LOCK"`,
		"fix: oc apply -f deploy/openshift/"} {
		if r.code != 3 || !strings.Contains(r.stderr, w) {
			t.Errorf("exit %d; want 3 and %q on stderr", r.code, w)
		}
	}
	assertNothingLeft(t, c)

	applyFile(t, c, "../../deploy/openshift/scc.yaml")
	applyFile(t, c, "../../deploy/openshift/rbac.yaml")
	r = run(t, c, scenario, 4*time.Minute, nil, "--kubeconfig", kubeconfig)
	if r.code != 0 || r.rep == nil || !strings.Contains(r.stderr, "admitted by a server-side dry run") {
		t.Fatalf("exit %d with deploy/openshift applied; want 0", r.code)
	}
	for _, res := range r.rep.Results {
		if res.Verdict != schema.VerdictPass || res.BestBps <= 0 {
			t.Errorf("%s %s->%s: %s %q", res.Test, res.From, res.To, res.Verdict, res.Reason)
		}
	}
	if len(r.rep.Results) != 2 {
		t.Errorf("%d results, want iperf3 and nccl-sendrecv", len(r.rep.Results))
	}
	assertNothingLeft(t, c)

	// Every shipped kube scenario, as `plan -o manifests` prints it, is
	// admitted: the pods under the SCC, the etcd under restricted-v2.
	cs := clientFor(t, kubeconfig)
	for _, sh := range scenarios.ShippedScenarios() {
		sc, err := scenarios.LoadBytes(sh.Name+".yaml", sh.Data)
		if err != nil || sc.Backend != scenarios.BackendKube {
			continue
		}
		path := writeScenario(t, string(sh.Data))
		out, err := runCmd(t, "plan", path, "-o", "manifests", "-n", "rdmabench")
		if err != nil {
			t.Fatalf("plan %s: %v\n%s", sh.Name, err, out)
		}
		docs, err := kube.DecodeManifest([]byte(out))
		if err != nil {
			t.Fatalf("%s: %v", sh.Name, err)
		}
		pods := 0
		for _, d := range docs {
			pod, ok := d.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			pods++
			_, err := cs.CoreV1().Pods("rdmabench").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Errorf("%s: pod %s refused: %v", sh.Name, pod.Name, err)
			}
		}
		if pods == 0 {
			t.Errorf("%s: no pod in its manifests", sh.Name)
		}
	}
}

// applyFile creates a manifest's objects (cluster.Apply: strict, any kind)
// and deletes them at the end of the test, waiting for a namespace to go.
func applyFile(t *testing.T, c *cluster.Cluster, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := c.Apply(context.Background(), data)
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), objs); err != nil {
			t.Error(err)
		}
		for _, o := range objs {
			if o.Resource.Resource == "namespaces" {
				waitNamespaceGone(t, c, o.Name)
			}
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// waitNamespaceGone waits (bounded) until a deleted namespace is gone, so
// that the next test can make it again.
func waitNamespaceGone(t *testing.T, c *cluster.Cluster, name string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		_, err := c.Client().CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Errorf("namespace %s still there 60s after its deletion", name)
}

func clientFor(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestRunThatMeasuredNothingExits5: on the test cluster (no RDMA in any
// pod) a scenario of RDMA tests only measures nothing: every test is
// skipped with its reason, the run exits 5, and JUnit lists the skips;
// --allow-empty accepts it.
func TestRunThatMeasuredNothingExits5(t *testing.T) {
	c := needCluster(t)
	sc := tcpScenario("e2e-empty", "", "")
	sc = sc[:strings.Index(sc, "tests:")] + "tests:\n  - name: write-bw\n    tool: ib_write_bw\n    from: decode\n    to: prefill\n    pattern: many-to-one\n"
	path := writeScenario(t, sc)
	junit := t.TempDir() + "/junit.xml"
	r := run(t, c, path, 3*time.Minute, nil, "--junit", junit)
	if r.code != 5 || !strings.Contains(r.stderr, "nothing was measured") {
		t.Fatalf("exit %d; want 5, nothing measured", r.code)
	}
	for _, res := range r.rep.Results {
		if res.Verdict != schema.VerdictSkipped || !strings.Contains(res.Reason, "RDMA") {
			t.Errorf("%s: %s %q; want skipped for want of RDMA", res.Test, res.Verdict, res.Reason)
		}
	}
	if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), "<skipped") {
		t.Errorf("JUnit: %v\n%s", err, x)
	}
	assertNothingLeft(t, c)
	if r := run(t, c, path, 3*time.Minute, nil, "--allow-empty"); r.code != 0 {
		t.Fatalf("--allow-empty: exit %d", r.code)
	}
	assertNothingLeft(t, c)
}
