package e2ekube

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
)

// tcpScenario is a kube scenario of TCP-capable tests between pods on the
// secondary network: one prefill pod, two decode pods that avoid it.
func tcpScenario(ns, extraCluster, extraTests string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-tcp
backend: kube
cluster:
  namespace: ` + ns + `
  image: rdmabench/tools:test
  networks: [default/data-net]
  resources:
    rdma/roce_gdr: "1"
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 90s
` + extraCluster + `
pools:
  - name: prefill
  - name: decode
    replicas: 2
    avoidPools: [prefill]
tests:
  - name: ucx-tcp-bw
    tool: ucx_perftest
    from: decode
    to: prefill
    pattern: many-to-one
    args:
      test: tag_bw
      transports: tcp
      sizes: [64KiB, 1MiB]
      iterations: 500
    expect:
      minBandwidth: 10Mb/s
  - name: iperf3
    tool: iperf3
    from: decode
    to: prefill
    pattern: many-to-one
    args:
      duration: 2s
      streams: 1
    expect:
      minBandwidth: 10Mb/s
` + extraTests
}

// The headline: a kube scenario runs from `rdmabench run` on a real
// control plane; pods land where the anti-affinity says, tools run between
// them over the secondary network, and nothing is left afterwards.
func TestRunTCPTestsBetweenPods(t *testing.T) {
	c := needCluster(t)
	r := run(t, c, writeScenario(t, tcpScenario("e2e-tcp", "", "")), 5*time.Minute, nil)
	if r.code != 0 || r.rep == nil {
		t.Fatalf("exit %d, report %v", r.code, r.rep != nil)
	}
	// 2 decode → 1 prefill pairs; ucx_perftest per size.
	byTest := map[string][]schema.Result{}
	for _, res := range r.rep.Results {
		byTest[res.Test] = append(byTest[res.Test], res)
		if res.Verdict != schema.VerdictPass || res.BestBps <= 0 || len(res.Samples) == 0 {
			t.Errorf("%s %s->%s: %s %q best %.0f", res.Test, res.From, res.To, res.Verdict, res.Reason, res.BestBps)
		}
	}
	if len(byTest["ucx-tcp-bw"]) != 4 || len(byTest["iperf3"]) != 2 {
		t.Fatalf("results per test: %d ucx, %d iperf3; want 4 (2 pairs × 2 sizes) and 2", len(byTest["ucx-tcp-bw"]), len(byTest["iperf3"]))
	}
	nodes := map[string]string{}
	_, secondary, _ := net.ParseCIDR("10.245.0.0/16")
	for _, ep := range r.rep.Endpoints {
		if ep.Node == "" || ep.Pod == "" || ep.Interface != "net1" || ep.Network != "default/data-net" || !secondary.Contains(net.ParseIP(ep.Address)) {
			t.Errorf("endpoint %+v: want its node, pod, and the secondary network's address on net1", ep)
		}
		if other, dup := nodes[ep.Node]; dup {
			t.Errorf("%s and %s share node %s: anti-affinity not applied", ep.Name, other, ep.Node)
		}
		nodes[ep.Node] = ep.Name
	}
	if len(r.rep.Endpoints) != 3 {
		t.Errorf("%d endpoints in report.json, want 3", len(r.rep.Endpoints))
	}
	// The namespace the run created is deleted with it (Terminating until
	// the namespace controller has emptied it).
	if ns, err := c.Client().CoreV1().Namespaces().Get(context.Background(), "e2e-tcp", metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
		t.Error("namespace e2e-tcp was created by the run and must be deleted with it")
	}
	assertNothingLeft(t, c)
}

// --kube-exec per-command, an exec per command instead of each pod
// container's session (the default the other tests use), runs the same
// tests to the same verdicts.
func TestRunPerCommandExec(t *testing.T) {
	c := needCluster(t)
	r := run(t, c, writeScenario(t, tcpScenario("e2e-per-command", "", "")), 5*time.Minute, nil, "--kube-exec", "per-command")
	if r.code != 0 || r.rep == nil {
		t.Fatalf("exit %d, report %v", r.code, r.rep != nil)
	}
	if len(r.rep.Results) != 6 {
		t.Errorf("%d results, want 6 (4 ucx_perftest, 2 iperf3)", len(r.rep.Results))
	}
	for _, res := range r.rep.Results {
		if res.Verdict != schema.VerdictPass || res.BestBps <= 0 {
			t.Errorf("%s %s->%s: %s %q", res.Test, res.From, res.To, res.Verdict, res.Reason)
		}
	}
	assertNothingLeft(t, c)
}

// A namespace that existed before the run is kept; --keep leaves the pods
// (placed as asked, read from the API) and `rdmabench clean` removes them.
func TestExistingNamespaceKeepAndClean(t *testing.T) {
	c := needCluster(t)
	createNamespace(t, c, "e2e-keep")
	sc := tcpScenario("e2e-keep", "", "")
	sc = sc[:strings.Index(sc, "tests:")] + "tests:\n  - name: iperf3\n    tool: iperf3\n    from: decode\n    to: prefill\n    pattern: many-to-one\n    args: {duration: 1s}\n"
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil, "--keep", "--run-id", "keep-1")
	if r.code != 0 || !strings.Contains(r.stderr, "rdmabench clean --run keep-1 -n e2e-keep") {
		t.Fatalf("exit %d; want the clean hint on stderr", r.code)
	}
	pods, err := c.Client().CoreV1().Pods("e2e-keep").List(context.Background(), metav1.ListOptions{LabelSelector: "rdmabench.io/run=keep-1"})
	if err != nil || len(pods.Items) != 3 {
		t.Fatalf("--keep: %d pods (%v), want 3", len(pods.Items), err)
	}
	nodeOf := map[string]string{}
	for _, p := range pods.Items {
		if prev, dup := nodeOf[p.Spec.NodeName]; dup {
			t.Errorf("pods %s and %s on one node %s", prev, p.Name, p.Spec.NodeName)
		}
		nodeOf[p.Spec.NodeName] = p.Name
	}
	out, err := runCmd(t, "clean", "--kubeconfig", c.Kubeconfig, "--run", "keep-1", "-n", "e2e-keep")
	if err != nil || !strings.Contains(out, "removed 3 pod(s)") {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if _, err := c.Client().CoreV1().Namespaces().Get(context.Background(), "e2e-keep", metav1.GetOptions{}); err != nil {
		t.Fatalf("the namespace existed before the run and was deleted: %v", err)
	}
	assertNothingLeft(t, c)
}

// More replicas than nodes with required anti-affinity: the scheduler's
// own message, exit 3, fast, nothing left.
func TestUnschedulableFailsFastWithTheSchedulersMessage(t *testing.T) {
	c := needCluster(t)
	sc := strings.Replace(tcpScenario("e2e-unsched", "", ""), "replicas: 2", "replicas: 5", 1)
	start := time.Now()
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil)
	if r.code != 3 || !strings.Contains(r.stderr, "FailedScheduling") || !strings.Contains(r.stderr, "didn't match pod anti-affinity rules") {
		t.Fatalf("exit %d; want 3 with the scheduler's anti-affinity message", r.code)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("took %s to fail; startupTimeout is 90s and the failure is certain", d)
	}
	if r.rep == nil {
		t.Error("no report.json for a failed run")
	}
	assertNothingLeft(t, c)
}

func TestBrokenImageFailsWithTheImage(t *testing.T) {
	c := needCluster(t)
	sc := strings.Replace(tcpScenario("e2e-image", "", ""), "rdmabench/tools:test", "registry.example/does-not-exist:1", 1)
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil)
	if r.code != 3 || !strings.Contains(r.stderr, "registry.example/does-not-exist:1") ||
		!(strings.Contains(r.stderr, "ImagePullBackOff") || strings.Contains(r.stderr, "ErrImagePull")) {
		t.Fatalf("exit %d; want 3 naming the image and the pull failure", r.code)
	}
	assertNothingLeft(t, c)
}

func TestStartupTimeout(t *testing.T) {
	c := needCluster(t)
	// No node has this label: the pods stay Pending past a short bound.
	sc := strings.Replace(tcpScenario("e2e-timeout", "  nodeSelector: {pool: none}\n", ""), "startupTimeout: 90s", "startupTimeout: 2s", 1)
	r := run(t, c, writeScenario(t, sc), 2*time.Minute, nil)
	if r.code != 3 || !strings.Contains(r.stderr, "StartupTimeout") || !strings.Contains(r.stderr, "cluster.startupTimeout 2s") {
		t.Fatalf("exit %d; want 3 with the startup timeout", r.code)
	}
	assertNothingLeft(t, c)
}

func TestMissingNetworkIsNamed(t *testing.T) {
	c := needCluster(t)
	createNamespace(t, c, "e2e-nonet")
	createNAD(t, c, "e2e-nonet", "other-net")
	sc := strings.Replace(tcpScenario("e2e-nonet", "", ""), "default/data-net", "data-net", 1)
	r := run(t, c, writeScenario(t, sc), time.Minute, nil)
	if r.code != 3 || !strings.Contains(r.stderr, "NetworkAttachmentDefinition e2e-nonet/data-net does not exist (namespace e2e-nonet has: other-net)") {
		t.Fatalf("exit %d; want the missing network named with the ones that exist", r.code)
	}
	assertNothingLeft(t, c)
}

// A tool that hangs in a pod is killed at the test's timeout and becomes
// an error result; the run goes on to the next test.
func TestHungToolIsKilledAndTheRunGoesOn(t *testing.T) {
	c := needCluster(t)
	// An iperf3 run of 60 s under a 4 s job timeout hangs past its bound.
	hang := `  - name: hang
    tool: iperf3
    from: decode
    to: prefill
    pattern: many-to-one
    timeout: 4s
    args:
      duration: 60s
`
	sc := tcpScenario("e2e-hang", "", hang)
	r := run(t, c, writeScenario(t, sc), 4*time.Minute, nil)
	if r.rep == nil {
		t.Fatal("no report")
	}
	var hung, ok int
	for _, res := range r.rep.Results {
		switch {
		case res.Test == "hang" && res.Verdict == schema.VerdictError && strings.Contains(res.Reason, "timed out"):
			hung++
		case res.Test != "hang" && res.Verdict == schema.VerdictPass:
			ok++
		}
	}
	if hung != 2 || ok != 6 || r.code != 3 {
		t.Fatalf("exit %d, %d timed-out legs (want 2), %d passing (want 6)", r.code, hung, ok)
	}
	assertNothingLeft(t, c)
}

// Ctrl-C mid-round: exit 130, report.json kept with what finished, zero
// objects and zero processes left.
func TestInterruptMidRun(t *testing.T) {
	c := needCluster(t)
	long := `  - name: long
    tool: iperf3
    from: decode
    to: prefill
    pattern: many-to-one
    args:
      duration: 60s
`
	sc := tcpScenario("e2e-int", "", long)
	// Rounds are one test each; "round N/M: long" starts the 60 s legs.
	r := run(t, c, writeScenario(t, sc), 4*time.Minute, onText(": long (", 3*time.Second, nil), "--run-id", "int-1")
	if r.code != 130 {
		t.Fatalf("exit %d, want 130", r.code)
	}
	if r.rep == nil || !r.rep.Run.Interrupted || len(r.rep.Results) < 4 {
		t.Fatalf("report.json after Ctrl-C: %+v", r.rep)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "results.jsonl")); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, c)
}

// The apiserver restarts while a leg runs: the legs whose exec streams
// broke are errors that say so, their tools are killed once the API is
// back, the next test runs, and the clean-up leaves nothing.
func TestAPIServerRestartMidRun(t *testing.T) {
	c := needCluster(t)
	long := `  - name: long
    tool: iperf3
    from: decode
    to: prefill
    pattern: many-to-one
    args:
      duration: 12s
  - name: after
    tool: iperf3
    from: decode
    to: prefill
    pattern: many-to-one
    args:
      duration: 1s
`
	sc := tcpScenario("e2e-restart", "", long)
	sc = sc[:strings.Index(sc, "tests:")] + "tests:\n" + long
	restart := onText(": long (", 3*time.Second, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.RestartAPIServer(ctx); err != nil {
			t.Errorf("restart apiserver: %v", err)
		}
		t.Log("apiserver restarted")
	})
	r := run(t, c, writeScenario(t, sc), 4*time.Minute, restart)
	if r.rep == nil {
		t.Fatal("no report.json")
	}
	verdicts := map[string][]string{}
	for _, res := range r.rep.Results {
		verdicts[res.Test] = append(verdicts[res.Test], string(res.Verdict)+": "+res.Reason)
	}
	if len(verdicts["long"]) != 2 || len(verdicts["after"]) != 2 {
		t.Fatalf("results %v: want both tests' legs", verdicts)
	}
	for _, v := range verdicts["after"] {
		if !strings.HasPrefix(v, "pass") {
			t.Errorf("the test after the restart: %s", v)
		}
	}
	// Legs cut by the restart say so (or passed, when their streams
	// outlived it); they are never silently missing.
	for _, v := range verdicts["long"] {
		if !strings.HasPrefix(v, "pass") && !strings.HasPrefix(v, "error") {
			t.Errorf("a leg cut by the restart: %s", v)
		}
	}
	assertNothingLeftWithin(t, c, 2*time.Minute)
}
