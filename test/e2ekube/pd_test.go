package e2ekube

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
)

// The product's headline scenario on the test cluster, with the test
// cluster's names: four pods on four nodes (prefill and decode avoid each
// other), the rdma-sriov network attached. The nodes have no RDMA, so
// rping and write-bw are skipped with their reason. The pods see their
// nvidia.com/gpu as placeholder /dev/nvidiaN (the agent's device-plugin
// part), so the other two run with the stand-ins: kv-read through the
// in-cluster etcd (told it may use TCP: the stand-in moves bytes over its
// sockets), NCCL sendrecv across the four pods through mpirun and the
// run's sshd. What the lane cannot give is edited out of the copy: the
// RDMA and line-rate expectations, VRAM (the stand-in, like a
// nixlbench built without CUDA, refuses it), and NIXL sizes past 1 MiB and NCCL sizes past 16 MiB (real bytes
// over veth pairs on two shared cores would outlast the job's bound).
func TestShippedPDDisaggOnTheTestCluster(t *testing.T) {
	c := needCluster(t)
	createNamespace(t, c, "e2e-pd")
	createNAD(t, c, "e2e-pd", "rdma-sriov")
	data, err := os.ReadFile("../../scenarios/pd-disagg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc := string(data)
	for _, e := range [][2]string{
		{"      iterations: 256\n    expect:\n      minLineRate: 80%\n      transport: rdma              # a silent TCP fallback fails the test\n",
			"      iterations: 10\n    requires: tcp\n"},
		// The lane's image has nixlbench's and nccl-tests' stand-ins, not a
		// python3 with NIXL nor a libnccl: the probes' own lanes prove them
		// (runner's TestNixlProbeThroughTheRunner, TestNCCLProbeThroughTheRunner).
		{"    tool: nixl_probe\n", "    tool: nixlbench\n"},
		{"    tool: nccl_probe\n", "    tool: nccl\n"},
		{"      maxSize: 64MiB\n", "      maxSize: 1MiB\n"},
		{"      maxSize: 1GiB\n", "      maxSize: 16MiB\n"},
		{"    expect:\n      minBusBW: 40GB/s\n", ""},
		// The nixlbench stand-in's target listens on its pod's address.
		{"  env:\n", "  env:\n    NIXLBENCH_STANDIN_ADDR: auto\n    NIXLBENCH_STANDIN_POLL_MS: \"50\"\n"},
		// Built without CUDA, as the stand-in is, nixlbench refuses VRAM.
		{"      initiatorSeg: VRAM\n      targetSeg: VRAM\n", "      initiatorSeg: DRAM\n      targetSeg: DRAM\n"},
	} {
		if !strings.Contains(sc, e[0]) {
			t.Fatalf("pd-disagg.yaml changed: %q not found; update this test", e[0])
		}
		sc = strings.Replace(sc, e[0], e[1], 1)
	}
	r := run(t, c, writeScenario(t, sc), 4*time.Minute, nil, "-n", "e2e-pd")
	if (r.code != 0 && r.code != 3) || r.rep == nil {
		t.Fatalf("exit %d", r.code)
	}
	if len(r.rep.Endpoints) != 4 {
		t.Fatalf("%d endpoints, want 4", len(r.rep.Endpoints))
	}
	nodes := map[string]bool{}
	for _, ep := range r.rep.Endpoints {
		nodes[ep.Node] = true
		if ep.Network != "e2e-pd/rdma-sriov" || ep.Interface == "" {
			t.Errorf("endpoint %+v: want the rdma-sriov network's address", ep)
		}
	}
	if len(nodes) != 4 {
		t.Errorf("pods on %d nodes, want 4 (anti-affinity and avoidPools)", len(nodes))
	}
	tests := map[string]bool{}
	for _, res := range r.rep.Results {
		tests[res.Test] = true
		if res.Test == "nccl-sendrecv" || res.Test == "kv-read" || res.Test == "tcp-baseline" {
			if res.Verdict != schema.VerdictPass || res.BestBps <= 0 {
				t.Errorf("%s %s->%s: %s %q; want it run and measured (real iperf3; the stand-ins)", res.Test, res.From, res.To, res.Verdict, res.Reason)
			}
			continue
		}
		if res.Verdict != schema.VerdictSkipped || res.Reason == "" {
			t.Errorf("%s: %s %q; want skipped with a reason", res.Test, res.Verdict, res.Reason)
		}
	}
	for _, name := range []string{"rping", "write-bw", "kv-read", "nccl-sendrecv", "tcp-baseline"} {
		if !tests[name] {
			t.Errorf("no result for %s", name)
		}
	}
	if !strings.Contains(r.stderr, "4/4 pods ready") {
		t.Error("no readiness progress on stderr")
	}
	assertNothingLeft(t, c)
}

// kube-check, the first run `make kube-up` suggests, as shipped (only its
// namespace moved): two pods on two nodes over the rdma-sriov network; the
// nodes have no RDMA, so rping and write-bw are skipped with preflight's
// reason; ucx_perftest and iperf3 measure between the pods; exit 0.
func TestShippedKubeCheckOnTheTestCluster(t *testing.T) {
	c := needCluster(t)
	createNamespace(t, c, "e2e-check")
	createNAD(t, c, "e2e-check", "rdma-sriov")
	// kube-check names the ServiceAccount of deploy/rbac.yaml, as every
	// shipped scenario does.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "rdmabench", Namespace: "e2e-check"}}
	if _, err := c.Client().CoreV1().ServiceAccounts("e2e-check").Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := run(t, c, "../../scenarios/kube-check.yaml", 3*time.Minute, nil, "-n", "e2e-check")
	if r.code != 0 || r.rep == nil {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.stderr)
	}
	nodes := map[string]bool{}
	for _, ep := range r.rep.Endpoints {
		nodes[ep.Node] = true
		if ep.Network != "e2e-check/rdma-sriov" || ep.Interface == "" {
			t.Errorf("endpoint %+v: want the rdma-sriov network's address", ep)
		}
	}
	if len(nodes) != 2 {
		t.Errorf("pods on %d nodes, want 2 (avoidPools)", len(nodes))
	}
	measured := map[string]int{}
	for _, res := range r.rep.Results {
		switch res.Test {
		case "ucx-bw", "iperf3":
			if res.Verdict != schema.VerdictPass || res.BestBps <= 0 {
				t.Errorf("%s: %s %q; want measured", res.Test, res.Verdict, res.Reason)
			}
			measured[res.Test]++
			// UCX's own log names shared memory between the two pods (one
			// host): the transport is shm, not unknown, and not a fabric figure.
			if res.Test == "ucx-bw" && (res.Transport == nil || res.Transport.Kind != "shm" || !strings.Contains(res.Reason, "not a fabric figure")) {
				t.Errorf("ucx-bw: transport %+v, reason %q; want shm from UCX's log and not a fabric figure", res.Transport, res.Reason)
			}
		default:
			if res.Verdict != schema.VerdictSkipped || !strings.Contains(res.Reason, "preflight rdma-device") {
				t.Errorf("%s: %s %q; want skipped for want of an RDMA device", res.Test, res.Verdict, res.Reason)
			}
		}
	}
	if measured["ucx-bw"] != 2 || measured["iperf3"] != 1 {
		t.Errorf("measured %v, want ucx-bw at two sizes and iperf3", measured)
	}
	assertNothingLeft(t, c)
}
