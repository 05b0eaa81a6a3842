package e2enixl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// kubeScenario: one prefill and one decode pod of the test control plane
// (each a network namespace; the secondary network, net1, joins them),
// the run's etcd a pod of its own; nixlbench over LIBFABRIC's tcp
// provider on net1, whose plugin does not take loopback, and over UCX.
const kubeScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: nixl-kube
  description: "real nixlbench between two pods, ETCD runtime through the run's etcd pod"
backend: kube
cluster:
  namespace: nixl
  image: host/nixl:test
  networks: [default/data-net]
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 120s
pools:
  - {name: prefill, avoidPools: [decode]}
  - {name: decode}
tests:
  - name: kv-libfabric
    tool: nixlbench
    from: decode
    to: prefill
    requires: tcp
    env: {FI_TCP_IFACE: net1}
    args: {backend: LIBFABRIC, op: READ, minSize: 1MiB, maxSize: 1MiB, iterations: 64, extra: ["--total_buffer_size=268435456", "--warmup_iter=16"]}
  - name: kv-ucx
    tool: nixlbench
    from: decode
    to: prefill
    requires: tcp
    args: {backend: UCX, op: READ, minSize: 1MiB, maxSize: 4MiB, extra: ["--total_buffer_size=268435456"]}
`

// TestKubePods: `rdmabench run` on the kube backend against the test
// control plane, the real nixlbench in two pods on two nodes, rendezvous
// through the etcd pod rdmabench starts (its address on the tools'
// command lines, the runner's own client through a port-forward).
func TestKubePods(t *testing.T) {
	needNixl(t)
	if err := cluster.Available(); err != nil {
		t.Skip(err)
	}
	bins := os.Getenv("RDMABENCH_KUBE_BIN")
	if bins == "" {
		t.Skip("RDMABENCH_KUBE_BIN is not set (make e2e-nixl builds the control plane and sets it)")
	}
	// Every container's PATH starts with rdmabench (the etcd pod) and the
	// NIXL build's nixlbench (a link: its libraries are found from its
	// real place).
	extra := t.TempDir()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "rdmabench"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(prefix, "bin", "nixlbench"), filepath.Join(extra, "nixlbench")); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{Nodes: 2, BinDir: bins, Log: &log, ExtraBinDir: extra})
	if err != nil {
		t.Fatalf("start the test cluster: %v\n%s", err, log.String())
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	if err := c.InstallMultusAPI(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNAD(ctx, "default", "data-net"); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(t.TempDir(), "nixl-kube.yaml")
	if err := os.WriteFile(scenario, []byte(kubeScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, stderr := rdmabench(t, "run", scenario, "--kubeconfig", c.Kubeconfig, "--out", out, "--html", "none")
	wall := time.Since(start)
	t.Logf("rdmabench run (exit %d, %.0f s):\n%s", code, wall.Seconds(), stderr)
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	for _, r := range rep.Results {
		if r.Verdict != schema.VerdictPass {
			t.Errorf("%s: %s (%s)", r.Test, r.Verdict, r.Reason)
			continue
		}
		if len(r.Commands) == 0 || !strings.Contains(r.Commands[0], "--etcd_endpoints=http://10.244.") {
			t.Errorf("%s: commands %q; want the etcd pod's address", r.Test, r.Commands)
		}
		if r.Backend == "LIBFABRIC" && (r.Transport == nil || r.Transport.Kind != "tcp" || r.Transport.Source != "libfabric") {
			t.Errorf("LIBFABRIC transport %+v; want tcp from NIXL's provider line", r.Transport)
		}
		t.Logf("%s %s: best %.2f Gb/s @%d; transport %+v", r.Test, r.Backend, r.BestBps/1e9, r.BestBytes, r.Transport)
	}
	if *record {
		recordCapture(t, "kube-pods", out, nil, nil, nil, "", fmt.Sprintf("rdmabench run on the test control plane: %s wall, exit %d", wall.Round(time.Second), code))
	}
}
