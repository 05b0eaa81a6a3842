package e2erdma

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// vmShell is the ssh command line that runs one shell line on a VM (the
// node agent's agent.Remote.Shell).
func vmShell(vm *VM) []string { return pair.SSH(vm) }

// TestKubeOnVMs: the kube backend on the soft-RoCE VMs. A real
// kube-apiserver, scheduler and controller-manager run here; the two VMs
// are its nodes (the node agent serves their kubelet API here and runs
// their pods' processes in the VMs over ssh, hostNetwork). `rdmabench run`
// places one pod per VM by anti-affinity and runs ib_write_bw and rping pod
// to pod over rxe0 through the exec API, with discovery, preflight and the
// path proof inside the pods; then nothing is left in the API or the VMs.
func TestKubeOnVMs(t *testing.T) {
	needDataLink(t)
	// Registered first, so it runs last: after the control plane stopped
	// and every pod process was killed on the VMs (a CI run once found
	// vm2 with "No route to host" to vm1 for the rest of the lane).
	t.Cleanup(func() { dataLinkKept(t) })
	c, log := startVMCluster(t)
	t.Run("run", func(t *testing.T) { kubeRunOnVMs(t, c, log) })
	t.Run("ctrl-c", func(t *testing.T) { kubeInterruptOnVMs(t, c, log) })
}

// startVMCluster starts the control plane with the two VMs as its nodes,
// stopped when the test ends.
func startVMCluster(t *testing.T) (*cluster.Cluster, *syncBuffer) {
	t.Helper()
	bins := os.Getenv("RDMABENCH_KUBE_BIN")
	if bins == "" {
		t.Skip("RDMABENCH_KUBE_BIN is not set: `make e2e-rdma` builds the control plane (make kube-bins) and sets it")
	}
	var remotes []cluster.RemoteNode
	for _, vm := range pair.VMs {
		remotes = append(remotes, cluster.RemoteNode{Name: vm.Name,
			Remote: agent.Remote{Shell: vmShell(vm), HostIP: vm.DataIP},
			Labels: map[string]string{"rdmabench.io/soft-roce": "true"}})
	}
	log := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := cluster.Start(ctx, cluster.Options{BinDir: bins, RemoteNodes: remotes, Log: log})
	cancel()
	if err != nil {
		t.Fatalf("start the control plane with the VMs as nodes: %v\n%s", err, log.String())
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	t.Logf("control plane up with nodes %v", c.NodeNames())
	return c, log
}

// kubeScenario writes a kube scenario placing one pod on each VM (host
// network: rxe0 and its address are the VM's) with the given tests.
func kubeScenario(t *testing.T, tests string) string {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-softroce
backend: kube
cluster:
  namespace: softroce
  image: host/rdmabench:test
  hostNetwork: true
  nodeSelector:
    rdmabench.io/soft-roce: "true"
  antiAffinity: kubernetes.io/hostname
  startupTimeout: 90s
lineRate: auto
defaults:
  device: rxe0
  gidIndex: 1
  timeout: 90s
pools:
  - name: server
  - name: client
    avoidPools: [server]
tests:
` + tests
	scenario := filepath.Join(t.TempDir(), "kube-softroce.yaml")
	if err := os.WriteFile(scenario, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return scenario
}

func kubeRunOnVMs(t *testing.T, c *cluster.Cluster, log *syncBuffer) {
	scenario := kubeScenario(t, `  - name: write-bw
    tool: ib_write_bw
    from: client
    to: server
    args:
      sizes: [64KiB]
      iterations: 200
  - name: rping
    tool: rping
    from: client
    to: server
    args:
      count: 5
`)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := rdmabench(t, "run", scenario, "--kubeconfig", c.Kubeconfig, "--out", out, "--html", "none")
	t.Logf("rdmabench run (exit %d):\n%s%s", code, stderr, stdout)
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("exit %d; want 0 (every test passes)", code)
	}
	// Placement: one pod per VM, their addresses the VMs' rxe0 addresses.
	nodes := map[string]string{}
	for _, ep := range rep.Endpoints {
		nodes[ep.Name] = ep.Node
		want := map[string]string{"vm1": "10.9.0.1", "vm2": "10.9.0.2"}[ep.Node]
		if want == "" || ep.Address != want || ep.Device != "rxe0" {
			t.Errorf("endpoint %s: node %q address %q device %q; want a VM, its 10.9.0.x address and rxe0", ep.Name, ep.Node, ep.Address, ep.Device)
		}
	}
	if len(nodes) != 2 || nodes["server-0"] == nodes["client-0"] {
		t.Errorf("pods on nodes %v; want server and client on different VMs", nodes)
	}
	if rep.Run.LineRate == nil || rep.Run.LineRate.Bps <= 0 {
		t.Errorf("line rate %+v; want rxe0's, read in the pod", rep.Run.LineRate)
	}
	for _, r := range rep.Results {
		if r.Verdict != schema.VerdictPass {
			t.Errorf("%s: %s (%s)", r.Test, r.Verdict, r.Reason)
			continue
		}
		switch r.Tool {
		case "ib_write_bw":
			if r.Transport == nil || r.Transport.Kind != "rdma" || r.BestBps <= 0 || r.BestBps >= 2.5e9 {
				t.Errorf("ib_write_bw: transport %+v best %v; want RDMA below rxe's 2.5 Gb/s", r.Transport, r.BestBps)
			}
			if r.Path == nil || r.Path.Invalid {
				t.Errorf("ib_write_bw: path %+v; want rxe0's counters read in the pods", r.Path)
			}
			t.Logf("ib_write_bw pod to pod over rxe0: %.0f Mb/s; path: %s", r.BestBps/1e6, pathDetail(r.Path))
		case "rping":
			t.Logf("rping pod to pod: %s", r.Reason)
		}
	}
	if len(rep.Results) != 2 {
		t.Errorf("%d results; want 2", len(rep.Results))
	}

	assertNothingLeftOnVMs(t, c, log)
}

// kubeInterruptOnVMs: Ctrl-C while ib_write_bw runs in the VM pods ends the
// run with exit 130, report.json kept, and leaves no pod in the API and no
// process of a pod in either VM.
func kubeInterruptOnVMs(t *testing.T, c *cluster.Cluster, log *syncBuffer) {
	scenario := kubeScenario(t, `  - name: long-write-bw
    tool: ib_write_bw
    from: client
    to: server
    args:
      sizes: [64KiB]
      duration: 60s
`)
	out := filepath.Join(t.TempDir(), "run")
	r := startRun(t, "run", scenario, "--kubeconfig", c.Kubeconfig, "--out", out, "--html", "none")
	// ib_write_bw runs in both pods once the server listens and the client
	// started; give it the time to.
	for _, vm := range pair.VMs {
		waitVMProcess(t, vm, "ib_write_bw", 30*time.Second)
	}
	code := r.interrupt(t)
	t.Logf("rdmabench run after Ctrl-C:\n%s", r.stderr.String())
	if code != 130 {
		t.Errorf("exit %d; want 130", code)
	}
	if _, err := schema.Load(filepath.Join(out, "report.json")); err != nil {
		t.Errorf("report.json after Ctrl-C: %v", err)
	}
	assertNothingLeftOnVMs(t, c, log)
}

// waitVMProcess waits until a pod process whose command line holds name
// runs on vm.
func waitVMProcess(t *testing.T, vm *VM, name string, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		procs, err := agent.RemoteProcesses(ctx, vmShell(vm))
		cancel()
		for _, p := range procs {
			if strings.Contains(p.Cmdline, name) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %s among the pod processes (%v): %v", vm.Name, name, err, procs)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// assertNothingLeftOnVMs: no pod of a run in the API, no pod process in the
// VMs. A deleted pod's processes end shortly after its object (the agent
// kills them in the background, as a kubelet does): poll, bounded.
func assertNothingLeftOnVMs(t *testing.T, c *cluster.Cluster, log *syncBuffer) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		lctx, lcancel := context.WithTimeout(context.Background(), 20*time.Second)
		pods, err := c.Client().CoreV1().Pods(corev1.NamespaceAll).List(lctx, metav1.ListOptions{LabelSelector: "rdmabench.io/run"})
		if err != nil {
			left = append(left, "listing pods: "+err.Error())
		} else {
			for _, p := range pods.Items {
				left = append(left, "pod "+p.Namespace+"/"+p.Name)
			}
		}
		for _, vm := range pair.VMs {
			procs, err := agent.RemoteProcesses(lctx, vmShell(vm))
			if err != nil {
				left = append(left, vm.Name+": "+err.Error())
			}
			for _, p := range procs {
				left = append(left, vm.Name+": "+p.Cmdline)
			}
		}
		lcancel()
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after 30 s: %s\nagent log:\n%s", strings.Join(left, "; "), log.String())
		}
		time.Sleep(time.Second)
	}
}

func pathDetail(p *schema.PathProof) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("verified %v: %s", p.Verified, p.Detail)
}
