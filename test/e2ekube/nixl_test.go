package e2ekube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// nixlScenario is backend-compare.yaml on the test cluster: one prefill
// and one decode pod, nixlbench READ DRAM→DRAM with the decode pod as
// initiator, one leg per NIXL backend, over TCP (the nodes have no RDMA).
// The stand-in's target listens on NIXLBENCH_STANDIN_ADDR (its pod's
// data address here; real nixlbench publishes UCX's own worker address).
func nixlScenario(ns string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-nixl
backend: kube
cluster:
  namespace: ` + ns + `
  image: rdmabench/tools:test
  networks: [default/data-net]
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 90s
pools:
  - name: prefill
    avoidPools: [decode]
  - name: decode
tests:
  - name: nixl-backends
    tool: nixlbench
    from: decode
    to: prefill
    args:
      backends: [UCX, UCCL, LIBFABRIC]
      op: READ
      initiatorSeg: DRAM
      targetSeg: DRAM
      transports: tcp
      minSize: 4KiB
      maxSize: 64KiB
      iterations: 100
    env: {NIXLBENCH_STANDIN_POLL_MS: "50", NIXLBENCH_STANDIN_ADDR: "${addr:prefill-0}"}
    expect:
      minBandwidth: 1Mb/s
`
}

// nixlbench (the stand-in, from the lane's bin dir) through `rdmabench
// run` on pods of the tools image: the runner starts `rdmabench etcd` from
// the image in a pod of its own with a Service, reaches it through a
// port-forward (the node agent's), and each backend's leg rendezvouses
// through it. One comparable row per backend; with --keep the etcd pod
// stays, and through a port-forward of the test's own it holds no
// nixlbench key (each leg deleted its group's); then clean removes it all.
func TestNixlbenchBackendsThroughInClusterEtcd(t *testing.T) {
	c := needCluster(t)
	// --keep leaves the run's objects: removed whatever the test finds.
	t.Cleanup(func() {
		if out, err := runCmd(t, "clean", "--run", "nixl-1", "-n", "e2e-nixl", "--kubeconfig", c.Kubeconfig); err != nil {
			t.Errorf("clean: %v\n%s", err, out)
		}
		assertNothingLeft(t, c)
	})
	r := run(t, c, writeScenario(t, nixlScenario("e2e-nixl")), 5*time.Minute, nil, "--keep", "--run-id", "nixl-1")
	if r.code != 0 || r.rep == nil {
		t.Fatalf("exit %d, report %v", r.code, r.rep != nil)
	}
	if !strings.Contains(r.stderr, "etcd for nixlbench: pod ") || !strings.Contains(r.stderr, "admits only the run's pods to it") {
		t.Error("no in-cluster etcd, or no word of its NetworkPolicy, on stderr")
	}
	// The etcd's NetworkPolicy (kept with --keep): ingress to the etcd
	// pod's client port from the run's pods only. (The test cluster's
	// network does not enforce NetworkPolicy; the object is what is
	// checked here.)
	nps, err := c.Client().NetworkingV1().NetworkPolicies("e2e-nixl").List(context.Background(), metav1.ListOptions{LabelSelector: "rdmabench.io/run=nixl-1"})
	if err != nil || len(nps.Items) != 1 {
		t.Fatalf("NetworkPolicies of the run: %v %v", nps, err)
	}
	np := nps.Items[0].Spec
	if np.PodSelector.MatchLabels["rdmabench.io/role"] != "etcd" || np.PodSelector.MatchLabels["rdmabench.io/run"] != "nixl-1" ||
		len(np.Ingress) != 1 || len(np.Ingress[0].From) != 1 || np.Ingress[0].From[0].PodSelector.MatchLabels["rdmabench.io/run"] != "nixl-1" ||
		len(np.Ingress[0].From[0].PodSelector.MatchLabels) != 1 || np.Ingress[0].Ports[0].Port.IntValue() != 2379 {
		t.Errorf("NetworkPolicy %+v: want ingress to the etcd pod's 2379 from the run's pods only", np)
	}
	backends := map[string]schema.Result{}
	for _, res := range r.rep.Results {
		if res.Test != "nixl-backends" {
			continue
		}
		if res.Verdict != schema.VerdictPass || res.BestBps <= 0 || len(res.Samples) == 0 {
			t.Errorf("%s %s->%s: %s %q best %.0f", res.Backend, res.From, res.To, res.Verdict, res.Reason, res.BestBps)
		}
		if !strings.Contains(res.From, "decode") || !strings.Contains(res.To, "prefill") {
			t.Errorf("%s: %s -> %s; want decode (initiator) -> prefill", res.Backend, res.From, res.To)
		}
		b := res.Backend
		if _, dup := backends[b]; dup {
			t.Errorf("two rows for backend %q", b)
		}
		backends[b] = res
	}
	for _, b := range []string{"UCX", "UCCL", "LIBFABRIC"} {
		if _, ok := backends[b]; !ok {
			t.Errorf("no row for backend %s (rows: %v)", b, keys(backends))
		}
	}
	// The etcd pod is still there (--keep): no key of any leg's group.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := c.Client().CoreV1().Pods("e2e-nixl").List(ctx, metav1.ListOptions{LabelSelector: "rdmabench.io/role=etcd"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("etcd pod after --keep: %v %v", pods, err)
	}
	if n, err := etcdKeys(ctx, c, "e2e-nixl", pods.Items[0].Name, "xferbench/"); err != nil {
		t.Errorf("count etcd keys through a port-forward: %v", err)
	} else if n != 0 {
		t.Errorf("%d nixlbench keys left in etcd after the run", n)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// etcdKeys counts the keys under prefix in the etcd of pod, through a
// port-forward of the test's own and etcd's JSON gateway (/v3/kv/range).
func etcdKeys(ctx context.Context, c *cluster.Cluster, ns, pod, prefix string) (int, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return 0, err
	}
	req := c.Client().CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward")
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", req.URL())
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:2379"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return 0, err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return 0, err
	}
	end := []byte(prefix)
	end[len(end)-1]++
	body := fmt.Sprintf(`{"key":%q,"range_end":%q,"count_only":true}`,
		base64.StdEncoding.EncodeToString([]byte(prefix)), base64.StdEncoding.EncodeToString(end))
	hreq, _ := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("http://127.0.0.1:%d/v3/kv/range", ports[0].Local), strings.NewReader(body))
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Count string `json:"count"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("etcd: %s: %s", resp.Status, b)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, fmt.Errorf("etcd: %v: %s", err, b)
	}
	n := 0
	if out.Count != "" { // etcd leaves count out when it is 0
		if _, err := fmt.Sscan(out.Count, &n); err != nil {
			return 0, fmt.Errorf("etcd count %q: %v", out.Count, err)
		}
	}
	return n, nil
}
