package e2ekube

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
)

// imagesScenario: the tools image the project ships (no nixlbench in it)
// beside a nixl-family image; nixlbench READ DRAM over TCP (the nodes have
// no RDMA) and iperf3 between a decode and a prefill pod.
func imagesScenario(ns, nixl string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-images
backend: kube
cluster:
  namespace: ` + ns + `
  image: ` + cpuToolsImage + `
  images: {nixl: ` + nixl + `}
  networks: [default/data-net]
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 90s
pools:
  - name: prefill
    avoidPools: [decode]
  - name: decode
tests:
  - name: kv-read
    tool: nixlbench
    from: decode
    to: prefill
    args: {backend: UCX, op: READ, initiatorSeg: DRAM, targetSeg: DRAM, transports: tcp, minSize: 4KiB, maxSize: 64KiB, iterations: 100}
    env: {NIXLBENCH_STANDIN_POLL_MS: "50", NIXLBENCH_STANDIN_ADDR: "${addr:prefill-0}"}
    expect: {minBandwidth: 1Mb/s}
  - name: tcp-bw
    tool: iperf3
    from: decode
    to: prefill
    args: {duration: 1s}
`
}

// Each pod runs the tools container and a nixl container; nixlbench (only
// in the nixl image) runs there, probed there by preflight, and iperf3 in
// the tools container.
func TestToolsRunInTheirFamilyContainer(t *testing.T) {
	c := needCluster(t)
	t.Cleanup(func() {
		if out, err := runCmd(t, "clean", "--run", "images-1", "-n", "e2e-images", "--kubeconfig", c.Kubeconfig); err != nil {
			t.Errorf("clean: %v\n%s", err, out)
		}
		assertNothingLeft(t, c)
	})
	r := run(t, c, writeScenario(t, imagesScenario("e2e-images", nixlImage)), 4*time.Minute, nil, "--keep", "--run-id", "images-1")
	if r.code != 0 || r.rep == nil {
		t.Fatalf("exit %d, report %v", r.code, r.rep != nil)
	}
	for _, res := range r.rep.Results {
		if res.Verdict != schema.VerdictPass {
			t.Errorf("%s %s->%s: %s %q", res.Test, res.From, res.To, res.Verdict, res.Reason)
		}
	}
	if len(r.rep.Results) < 2 {
		t.Errorf("%d results, want kv-read and tcp-bw", len(r.rep.Results))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := c.Client().CoreV1().Pods("e2e-images").List(ctx, metav1.ListOptions{LabelSelector: "rdmabench.io/run=images-1,rdmabench.io/pool"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("endpoint pods after --keep: %v %v", pods, err)
	}
	for _, p := range pods.Items {
		var got []string
		for _, ct := range p.Spec.Containers {
			got = append(got, ct.Name+"="+ct.Image)
		}
		if strings.Join(got, " ") != "tools="+cpuToolsImage+" nixl="+nixlImage {
			t.Errorf("pod %s containers %v", p.Name, got)
		}
	}
	for _, ep := range r.rep.Preflight {
		found := map[string]string{}
		for _, ch := range ep.Checks {
			found[ch.ID+"@"+ch.Container] = ch.Status
		}
		if found["binary-nixlbench@nixl"] != schema.PreflightPass || found["binary-iperf3@"] != schema.PreflightPass {
			t.Errorf("%s preflight %v: want nixlbench found in the nixl container, iperf3 in the tools one", ep.Endpoint, found)
		}
	}
}

// An image of the nixl family without nixlbench: preflight names the
// image, its container and the key to set; only the nixlbench test is
// skipped.
func TestFamilyImageLackingItsToolSkipsOnlyItsTests(t *testing.T) {
	c := needCluster(t)
	r := run(t, c, writeScenario(t, imagesScenario("e2e-images-missing", noNixlImage)), 4*time.Minute, nil)
	if r.rep == nil {
		t.Fatalf("exit %d, no report", r.code)
	}
	want := "image " + noNixlImage + " (container nixl)"
	for _, res := range r.rep.Results {
		switch res.Test {
		case "kv-read":
			if res.Verdict != schema.VerdictSkipped || !strings.Contains(res.Reason, want) || !strings.Contains(res.Reason, "cluster.images.nixl") {
				t.Errorf("kv-read: %s %q: want skipped, naming %q and cluster.images.nixl", res.Verdict, res.Reason, want)
			}
		case "tcp-bw":
			if res.Verdict != schema.VerdictPass {
				t.Errorf("tcp-bw: %s %q: the tools container's test must run", res.Verdict, res.Reason)
			}
		}
	}
	for _, ep := range r.rep.Preflight {
		for _, ch := range ep.Checks {
			if ch.ID == "binary-nixlbench" && (ch.Status != schema.PreflightFail || ch.Container != "nixl" || !strings.Contains(ch.Evidence, want)) {
				t.Errorf("%s: %+v", ep.Endpoint, ch)
			}
		}
	}
	assertNothingLeft(t, c)
}
