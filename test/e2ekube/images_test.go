package e2ekube

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// servingScenario is pd-disagg's shape on the lane: a prefill and a
// decode pod on two nodes, each with one RDMA device (an SR-IOV-like VF of
// rdma/roce_gdr) on the SR-IOV network, from a serving-like image without
// perftest, rping, iperf3 or rdma-core, the tools image as toolsImage.
// rping and ib_write_bw (the bundle's), iperf3 (the bundle's) and
// nixlbench (the image's: the stand-in) all run in the one container.
func servingScenario(ns string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-serving
backend: kube
cluster:
  namespace: ` + ns + `
  image: ` + servingImage + `
  toolsImage: ` + cpuToolsImage + `
  networks: [default/sriov-net]
  resources: {rdma/roce_gdr: "1"}
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 90s
pools:
  - name: prefill
    avoidPools: [decode]
  - name: decode
tests:
  - name: rping
    tool: rping
    from: decode
    to: prefill
  - name: write-bw
    tool: ib_write_bw
    from: decode
    to: prefill
  - name: kv-read
    tool: nixlbench
    from: decode
    to: prefill
    args: {backend: UCX, op: READ, initiatorSeg: DRAM, targetSeg: DRAM, transports: tcp, minSize: 4KiB, maxSize: 64KiB, iterations: 100}
    env: {NIXLBENCH_STANDIN_POLL_MS: "50", NIXLBENCH_STANDIN_ADDR: "${addr:prefill-0}"}
  - name: tcp-bw
    tool: iperf3
    from: decode
    to: prefill
    args: {duration: 1s}
`
}

// One container per pod, from the serving image, holding the pod's one
// VF; the init container from the tools image brought the bundle. The
// bundle's iperf3 and the image's nixlbench measure in that container;
// rping and ib_write_bw are the bundle's (the image has neither, nor
// libibverbs) and are told the pod's own device, which this host does not
// have: preflight skips them naming it, and run by hand they start
// (Debian's binaries on the bundle's loader and libraries) and fail on
// that device.
func TestServingImageRunsEveryTestInOneContainer(t *testing.T) {
	c := needCluster(t)
	const ns, id = "e2e-serving", "serving-1"
	t.Cleanup(func() {
		if out, err := runCmd(t, "clean", "--run", id, "-n", ns, "--kubeconfig", c.Kubeconfig); err != nil {
			t.Errorf("clean: %v\n%s", err, out)
		}
		assertNothingLeft(t, c)
	})
	r := run(t, c, writeScenario(t, servingScenario(ns)), 4*time.Minute, nil, "--keep", "--run-id", id)
	if r.rep == nil || (r.code != 0 && r.code != 3) {
		t.Fatalf("exit %d, report %v\n%s", r.code, r.rep != nil, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := c.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "rdmabench.io/run=" + id + ",rdmabench.io/pool"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("endpoint pods after --keep: %v %v", pods, err)
	}
	devices := map[string]string{} // endpoint → its VF's RDMA device
	for _, p := range pods.Items {
		devices[p.Labels["rdmabench.io/endpoint"]] = checkOneContainer(t, c, &p)
	}
	got := map[string]schema.Result{}
	for _, res := range r.rep.Results {
		got[res.Test] = res
	}
	for _, name := range []string{"kv-read", "tcp-bw"} {
		if res := got[name]; res.Verdict != schema.VerdictPass || res.BestBps <= 0 {
			t.Errorf("%s: %s %q: want measured in the one container", name, res.Verdict, res.Reason)
		}
	}
	for _, name := range []string{"rping", "write-bw"} {
		res := got[name]
		if res.Verdict != schema.VerdictSkipped || !strings.Contains(res.Reason, devices[res.From]) && !strings.Contains(res.Reason, devices[res.To]) {
			t.Errorf("%s: %s %q: want skipped for want of the pod's own device (%v)", name, res.Verdict, res.Reason, devices)
		}
	}
	for _, ep := range r.rep.Preflight {
		for _, ch := range ep.Checks {
			if strings.HasPrefix(ch.ID, "binary-") && ch.Status != schema.PreflightPass {
				t.Errorf("%s: %s %s %q: the bundle or the image should carry it", ep.Endpoint, ch.ID, ch.Status, ch.Evidence)
			}
		}
	}
}

// checkOneContainer checks a kept pod's shape and its VF, runs the
// bundle's tools in it and returns its VF's RDMA device.
func checkOneContainer(t *testing.T, c *cluster.Cluster, p *corev1.Pod) string {
	t.Helper()
	if len(p.Spec.Containers) != 1 || len(p.Spec.InitContainers) != 1 || p.Spec.Containers[0].Image != servingImage ||
		p.Spec.InitContainers[0].Image != cpuToolsImage {
		t.Fatalf("pod %s: containers %+v, init %+v", p.Name, p.Spec.Containers, p.Spec.InitContainers)
	}
	if q := p.Spec.Containers[0].Resources.Limits[agent.SRIOVResource]; q.Value() != 1 {
		t.Errorf("pod %s: %s %v, want 1 in the one container", p.Name, agent.SRIOVResource, q.String())
	}
	var status []struct {
		Name       string `json:"name"`
		DeviceInfo *struct {
			PCI struct {
				Address string `json:"pci-address"`
				RDMA    string `json:"rdma-device"`
			} `json:"pci"`
		} `json:"device-info"`
	}
	if err := json.Unmarshal([]byte(p.Annotations["k8s.v1.cni.cncf.io/network-status"]), &status); err != nil || len(status) != 2 || status[1].DeviceInfo == nil {
		t.Fatalf("pod %s network-status %v: %v", p.Name, p.Annotations["k8s.v1.cni.cncf.io/network-status"], err)
	}
	vf := status[1].DeviceInfo.PCI
	// The device plugin's device-info file of that VF, on the pod's node.
	devinfo := filepath.Join(c.WorkDir, "nodes", p.Spec.NodeName, "var/run/k8s.cni.cncf.io/devinfo/dp", "rdma-roce_gdr-"+vf.Address+"-device.json")
	if b, err := os.ReadFile(devinfo); err != nil || !strings.Contains(string(b), `"rdma-device":"`+vf.RDMA+`"`) {
		t.Errorf("pod %s: device-info file %s: %s %v", p.Name, devinfo, b, err)
	}
	script := `echo "vf=$PCIDEVICE_RDMA_ROCE_GDR"
for b in ib_write_bw rping iperf3 rdmabench; do command -v $b; done
ls /usr/bin/ib_write_bw /usr/bin/rping /usr/bin/iperf3 2>&1 | grep -c 'No such'
ls /usr/lib/x86_64-linux-gnu/libibverbs.so.1 /etc/libibverbs.d 2>&1 | grep -c 'No such'
ib_write_bw -d ` + vf.RDMA + ` 2>&1; echo "ib_write_bw exit $?"
rping -c -a 127.0.0.1 -C 1 2>&1; echo "rping exit $?"
iperf3 --version | head -1
echo "@end"`
	out := execPod(t, c, p.Namespace, p.Name, "sh", "-c", `PATH="$PATH:`+kube.BundleBin+`"; `+script)
	t.Logf("pod %s (VF %s, %s):\n%s", p.Name, vf.Address, vf.RDMA, out)
	for _, want := range []string{"vf=" + vf.Address + "\n", kube.BundleBin + "/ib_write_bw\n", kube.BundleBin + "/rping\n", kube.BundleBin + "/iperf3\n",
		kube.BundleBin + "/rdmabench\n", "\n3\n2\n", "ib_write_bw exit ", "rping exit ", "iperf 3."} {
		if !strings.Contains(out, want) {
			t.Errorf("pod %s: %q missing from the container's answer", p.Name, want)
		}
	}
	// Debian's ib_write_bw ran (on the bundle's loader and libraries) and
	// looked for the pod's device, which this host has not.
	if strings.Contains(out, "not found") || strings.Contains(out, "error while loading shared libraries") {
		t.Errorf("pod %s: a bundled tool did not start:\n%s", p.Name, out)
	}
	return vf.RDMA
}

// execPod runs argv (a script that ends by printing "@end") in the
// pod's one container and returns its stdout; a stream that ended before
// the script's end is tried again, three times at most.
func execPod(t *testing.T, c *cluster.Cluster, ns, pod string, argv ...string) string {
	t.Helper()
	req := c.Client().CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "tools", Command: argv, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	var out, errb bytes.Buffer
	for try := 1; try <= 3; try++ {
		ex, err := remotecommand.NewWebSocketExecutor(c.RESTConfig(), "GET", req.URL().String())
		if err != nil {
			t.Fatal(err)
		}
		out.Reset()
		errb.Reset()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
		cancel()
		if strings.Contains(out.String(), "@end") {
			return out.String()
		}
		t.Logf("exec in %s, try %d: %v; stdout %q, stderr %q", pod, try, err, out.String(), errb.String())
	}
	t.Errorf("exec in %s: no complete answer in 3 tries", pod)
	return out.String()
}
