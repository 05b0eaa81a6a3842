package e2erdma

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// The images join.sh imports into each VM's containerd (node-images.sh).
const (
	toolsImage   = "localhost/rdmabench/tools:lane"
	noRpingImage = "localhost/rdmabench/tools:no-rping"
)

// TestKubeOnVMNodes: the soft-RoCE VMs as real Kubernetes nodes. The
// control plane runs here; each VM joins it with its own kubelet,
// containerd and runc, the CNI bridge and the RDMA device plugin
// (advertising rxe0 as rdma/rxe), and the tools image is imported into
// containerd from its OCI archive. `rdmabench run` then places a pod on
// each VM (hostNetwork: rxe on kernel 6.1 carries no traffic for another
// network namespace) and runs ib_write_bw, rping and ucx_perftest pod to
// pod over rxe0, in real containers; then the negative cases a real
// runtime gives, Ctrl-C, and each time nothing left in the API or in
// containerd (its own ctr listing). Last, the VMs leave the cluster.
func TestKubeOnVMNodes(t *testing.T) {
	if os.Getenv("RDMABENCH_VM_NODES") != "1" {
		// Joining imports about 300 MB of image layers into containerd
		// under emulation (minutes on 2 cores): a lane of its own, run by
		// hand, not part of `make test` (the agent-based TestKubeOnVMs is).
		t.Skip("the VMs as real nodes run with `make e2e-nodes` (RDMABENCH_VM_NODES=1)")
	}
	needVMs(t)
	if !pair.VMs[0].NodeDisk || !pair.VMs[1].NodeDisk {
		t.Skip("the VMs have no node disk: `make e2e-rdma` builds it (make -C images softroce-node)")
	}
	c := startNodeCluster(t)
	lane := time.Now()
	t.Run("run", func(t *testing.T) { nodesRun(t, c) })
	t.Run("no-ipc-lock", func(t *testing.T) { nodesNoIPCLock(t, c) })
	t.Run("image-lacks-rping", func(t *testing.T) { nodesImageLacksTool(t, c) })
	t.Run("rdma-exhausted", func(t *testing.T) { nodesExhausted(t, c) })
	t.Run("ctrl-c", func(t *testing.T) { nodesInterrupt(t, c) })
	// Every run above is gone from containerd too, sandboxes included.
	assertNodesClean(t, c, true)
	t.Logf("the five runs and their clean-up: %.0fs at pace %s", time.Since(lane).Seconds(), bounds.pace)
}

// bounds are the node lane's, at this host's pace (startNodeCluster).
var bounds nodeBounds

// startNodeCluster starts the control plane with the VMs as joining
// machines, joins them and logs how long each took; when the test ends
// the VMs leave (leave.sh) and the control plane stops. The host's pace
// is measured on the VMs' boot, then on the image import, and sets the
// lane's bounds (bounds), which the log states.
func startNodeCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	bins := os.Getenv("RDMABENCH_KUBE_BIN")
	if bins == "" {
		t.Skip("RDMABENCH_KUBE_BIN is not set: `make e2e-rdma` builds the control plane (make kube-bins) and sets it")
	}
	bounds = baseNodeBounds.at(PaceOf("VMs booted", pair.BootTime, RefBoot))
	t.Logf("pace from the boot: %s", bounds.pace)
	log := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	begin := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{BinDir: bins, JoinNodes: pair.JoinNodes(),
		APIServerIPs: []net.IP{APIServerIP}, Log: log})
	cancel()
	if err != nil {
		t.Fatalf("start the control plane: %v\n%s", err, log.String())
	}
	t.Logf("control plane up in %.1fs", time.Since(begin).Seconds())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bounds.leave)
		defer cancel()
		begin := time.Now()
		if err := pair.Leave(ctx); err != nil {
			t.Errorf("leave: %v", err)
		}
		t.Logf("left the cluster in %.1fs", time.Since(begin).Seconds())
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	// Importing the image into containerd under emulation dominates the
	// join (node-images.sh): bounded at the boot's pace.
	ctx, cancel = context.WithTimeout(context.Background(), bounds.fit(t, "the join", bounds.join, 2*time.Minute))
	defer cancel()
	joins, err := pair.Join(ctx, c)
	for _, j := range joins {
		t.Logf("%s joined: Ready with %d %s %.1fs after join.sh started; join.sh (images imported) %.1fs; boot to Ready %.1fs (VMs booted in %.1fs)\n%s",
			j.Name, RDMAShares, RDMAResource, j.Ready.Seconds(), j.Joined.Seconds(), (pair.BootTime + j.Ready).Seconds(), pair.BootTime.Seconds(), j.Output)
	}
	if err != nil {
		t.Fatalf("join: %v\ncontrol plane log:\n%s", err, log.String())
	}
	if p, ok := importPace(joins); ok {
		bounds = baseNodeBounds.at(bounds.pace.Slower(p))
	} else {
		t.Errorf("no import time in join.sh's output: the bounds keep the boot's pace")
	}
	t.Logf("pace %s; the lane's bounds at this pace: %s", bounds.pace, bounds)
	return c
}

// nodeScenario writes a kube scenario for the VM nodes: the tools image
// from containerd (never pulled), host network, the RDMA resource,
// one pod per VM (server, and client avoiding it) unless pools says
// otherwise.
func nodeScenario(t *testing.T, image, capabilities, pools, tests string) string {
	t.Helper()
	if pools == "" {
		pools = `  - name: server
  - name: client
    avoidPools: [server]
`
	}
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: softroce-nodes
backend: kube
cluster:
  namespace: softroce
  image: ` + image + `
  imagePullPolicy: Never
  hostNetwork: true
  nodeSelector:
    ` + NodeLabel + `: "true"
  resources:
    ` + RDMAResource + `: "1"
  # The VMs have one vCPU and 2 GiB each (rdmabench's defaults, 2 CPUs and
  # 4Gi per pod, would never schedule there).
  cpu: 100m
  memory: 256Mi
  shmSize: 64Mi
  antiAffinity: kubernetes.io/hostname
  startupTimeout: ` + bounds.startup.String() + `
` + capabilities + `lineRate: auto
defaults:
  device: rxe0
  gidIndex: 1
  timeout: ` + bounds.test.String() + `
pools:
` + pools + `tests:
` + tests
	path := filepath.Join(t.TempDir(), "softroce-nodes.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOnNodes runs a scenario against the cluster and loads its report
// (nil when the run wrote none).
func runOnNodes(t *testing.T, c *cluster.Cluster, scenario string) (int, string, *schema.Report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	begin := time.Now()
	// Under emulation (TCG) starting a command in a container takes tens
	// of seconds: preflight's one exec per pod gets minutes, and the run
	// stops itself (keeping its report) a minute before the test's bound.
	bound := bounds.fit(t, "rdmabench run", bounds.run+time.Minute, 3*time.Minute)
	code, stdout, stderr := rdmabenchWithin(t, bound, "run", scenario, "--kubeconfig", c.Kubeconfig, "--out", out, "--html", "none",
		"--preflight-timeout", bounds.preflight.String(), "--timeout", (bound - time.Minute).String())
	t.Logf("rdmabench run (exit %d, %.0fs):\n%s%s", code, time.Since(begin).Seconds(), stderr, stdout)
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		return code, stderr, nil
	}
	logErroredOutputs(t, out, rep)
	return code, stderr, rep
}

// logErroredOutputs logs the tail of each raw tool output of a result
// that errored: the run folder is a temporary one, gone after the test.
func logErroredOutputs(t *testing.T, out string, rep *schema.Report) {
	t.Helper()
	for _, r := range rep.Results {
		if r.Verdict != schema.VerdictError {
			continue
		}
		_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".out") || !strings.Contains(path, r.Test) {
				return nil
			}
			b, _ := os.ReadFile(path)
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("%s (errored): %s:\n%s", r.Test, strings.TrimPrefix(path, out+"/"), b)
			return nil
		})
	}
}

const (
	writeBW64K = `  - name: write-bw
    tool: ib_write_bw
    from: client
    to: server
    args:
      sizes: [64KiB]
      iterations: 200
`
	rpingTest = `  - name: rping
    tool: rping
    from: client
    to: server
    args:
      count: 5
`
	ucxRCVerbs = `  - name: ucx-rc-verbs
    tool: ucx_perftest
    from: client
    to: server
    args:
      test: put_bw
      transports: rc_verbs
      sizes: [64KiB]
      iterations: 300
      extra: ["-d", "rxe0:1", "-x", "rc_verbs", "-D", "zcopy"]
`
)

// nodesRun: ib_write_bw, rping and ucx_perftest pod to pod over rxe0 in
// real containers, each passing, the RDMA legs proved on rxe0's counters
// read in the pods, and preflight reading what the runtime gave the pods:
// the device plugin's /dev/infiniband files, containerd's memlock limit
// and the IPC_LOCK capability.
func nodesRun(t *testing.T, c *cluster.Cluster) {
	code, _, rep := runOnNodes(t, c, nodeScenario(t, toolsImage, "", "", writeBW64K+rpingTest+ucxRCVerbs))
	if rep == nil || code != 0 {
		t.Fatalf("exit %d, report %v; want 0 and a report", code, rep != nil)
	}
	nodes := map[string]string{}
	for _, ep := range rep.Endpoints {
		nodes[ep.Name] = ep.Node
		want := map[string]string{"vm1": "10.9.0.1", "vm2": "10.9.0.2"}[ep.Node]
		if want == "" || ep.Address != want || ep.Device != "rxe0" || ep.Pod == "" {
			t.Errorf("endpoint %s: node %q pod %q address %q device %q; want a VM node, its 10.9.0.x and rxe0", ep.Name, ep.Node, ep.Pod, ep.Address, ep.Device)
		}
	}
	if len(nodes) != 2 || nodes["server-0"] == nodes["client-0"] {
		t.Errorf("pods on nodes %v; want server and client on different VMs", nodes)
	}
	if len(rep.Results) != 3 {
		t.Errorf("%d results; want 3", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Verdict != schema.VerdictPass {
			t.Errorf("%s: %s (%s)", r.Test, r.Verdict, r.Reason)
			continue
		}
		switch r.Tool {
		case "ib_write_bw", "ucx_perftest":
			if r.Transport == nil || r.Transport.Kind != "rdma" || r.BestBps <= 0 || r.BestBps >= 2.5e9 {
				t.Errorf("%s: transport %+v best %v; want RDMA below rxe's 2.5 Gb/s", r.Test, r.Transport, r.BestBps)
			}
			if r.Path == nil || !r.Path.Verified {
				t.Errorf("%s: path %+v; want verified on rxe0's counters", r.Test, r.Path)
			}
			t.Logf("%s pod to pod over rxe0: %.0f Mb/s; path: %s", r.Test, r.BestBps/1e6, pathDetail(r.Path))
		case "rping":
			t.Logf("rping pod to pod: %s", r.Reason)
		}
	}
	// What the runtime gave each pod, as preflight read it there.
	for _, ep := range rep.Preflight {
		checks := map[string]schema.PreflightCheck{}
		for _, ck := range ep.Checks {
			checks[ck.ID] = ck
		}
		dev, mem, ipc := checks["dev-infiniband"], checks["memlock"], checks["ipc-lock"]
		if dev.Status != schema.PreflightPass || !strings.Contains(dev.Evidence, "/dev/infiniband/uverbs0 (rxe0)") {
			t.Errorf("%s dev-infiniband: %+v; want the device plugin's uverbs0", ep.Endpoint, dev)
		}
		// containerd's default limit (8 MiB) covers what these tests pin;
		// the capability is the ipc-lock check's.
		if mem.Status != schema.PreflightPass || !strings.Contains(mem.Evidence, "ulimit -l 8192 KiB") {
			t.Errorf("%s memlock: %+v; want containerd's 8 MiB limit, enough", ep.Endpoint, mem)
		}
		if ipc.Status != schema.PreflightPass || !strings.Contains(ipc.Evidence, "IPC_LOCK held") {
			t.Errorf("%s ipc-lock: %+v; want IPC_LOCK held", ep.Endpoint, ipc)
		}
		t.Logf("%s on %s: %s; %s; %s", ep.Endpoint, ep.Node, dev.Evidence, mem.Evidence, ipc.Evidence)
	}
	assertNodesClean(t, c, false)
}

// nodesNoIPCLock: the same pods without IPC_LOCK, under containerd's 8 MiB
// memlock limit, asked for the ib_write_bw -a sweep (it pins 20 MiB):
// preflight names memlock (or, where it could not read the pods in time,
// ipc-lock from their spec) and the test is skipped with that reason, not
// run into "Couldn't allocate MR".
func nodesNoIPCLock(t *testing.T, c *cluster.Cluster) {
	sweep := `  - name: write-bw-sweep
    tool: ib_write_bw
    from: client
    to: server
    args:
      sweep: true
      iterations: 5
`
	code, _, rep := runOnNodes(t, c, nodeScenario(t, toolsImage, "  capabilities: []\n", "", sweep))
	if rep == nil || len(rep.Results) != 1 {
		t.Fatalf("exit %d, report %+v; want one result", code, rep)
	}
	r := rep.Results[0]
	// Preflight read the pods (memlock: 8 MiB, 20 MiB needed, no
	// CAP_IPC_LOCK) or, on a host too slow for --preflight-timeout, judged
	// them by their spec (ipc-lock): skipped either way, never run.
	byFacts := strings.HasPrefix(r.Reason, "preflight memlock: ulimit -l 8192 KiB, tools need 20480 KiB and CAP_IPC_LOCK is not held")
	bySpec := strings.HasPrefix(r.Reason, "preflight ipc-lock: the pod's spec drops every capability and adds none: IPC_LOCK is not held, and the memlock limit could not be read")
	if r.Verdict != schema.VerdictSkipped || !byFacts && !bySpec {
		t.Errorf("verdict %s reason %q; want skipped by preflight memlock (or ipc-lock, by the spec)", r.Verdict, r.Reason)
	}
	t.Logf("no IPC_LOCK: %s", r.Reason)
	assertNodesClean(t, c, false)
}

// nodesImageLacksTool: pods from an image without rping (the lane's
// no-rping tag): preflight finds the program missing in each pod and names
// it once per pod; both rping tests are skipped with that reason and the
// fix, the ib_write_bw test in the same pods still passes, and the run,
// having measured, exits 0 (skips with their reason do not fail a run).
func nodesImageLacksTool(t *testing.T, c *cluster.Cluster) {
	rpingBack := strings.NewReplacer("name: rping", "name: rping-back", "from: client", "from: server", "to: server", "to: client").Replace(rpingTest)
	code, stderr, rep := runOnNodes(t, c, nodeScenario(t, noRpingImage, "", "", rpingTest+rpingBack+writeBW64K))
	if rep == nil || len(rep.Results) != 3 {
		t.Fatalf("exit %d, report %+v; want three results", code, rep)
	}
	if code != 0 {
		t.Errorf("exit %d; want 0 (write-bw measured, the rping tests skipped with their reason)", code)
	}
	for _, r := range rep.Results {
		switch r.Tool {
		case "rping":
			if r.Verdict != schema.VerdictSkipped || !strings.HasPrefix(r.Reason, "preflight binary-rping: rping is not on PATH on ") ||
				!strings.Contains(r.Reason, "apt-get install rdmacm-utils") {
				t.Errorf("%s: %s %q; want skipped by preflight naming rping and the fix", r.Test, r.Verdict, r.Reason)
			}
			t.Logf("%s: %s", r.Test, r.Reason)
		default:
			if r.Verdict != schema.VerdictPass {
				t.Errorf("%s: %s %q; want pass in the same pods", r.Test, r.Verdict, r.Reason)
			}
		}
	}
	// Looked up once per pod, before any test: each pod named once.
	for _, ep := range []string{"server-0", "client-0"} {
		if n := strings.Count(stderr, "preflight FAIL binary-rping on "+ep+": rping is not on PATH"); n != 1 {
			t.Errorf("rping named %d times for %s on stderr; want once", n, ep)
		}
	}
	assertNodesClean(t, c, false)
}

// nodesExhausted: three pods each asking for both units of rdma/rxe a VM
// has (the device plugin advertises 2 per VM): the third finds none left
// on either VM, and the run fails at once with the scheduler's
// FailedScheduling message naming the resource, exit 3, nothing left.
func nodesExhausted(t *testing.T, c *cluster.Cluster) {
	both := fmt.Sprintf("    resources:\n      %s: \"%d\"\n", RDMAResource, RDMAShares)
	pools := "  - name: server\n" + both + "  - name: client\n    avoidPools: [server]\n" + both + "  - name: extra\n" + both
	code, stderr, _ := runOnNodes(t, c, nodeScenario(t, toolsImage, "", pools, rpingTest))
	if code != 3 || !strings.Contains(stderr, "FailedScheduling") || !strings.Contains(stderr, "Insufficient "+RDMAResource) {
		t.Errorf("exit %d; want 3 with FailedScheduling naming Insufficient %s", code, RDMAResource)
	}
	assertNodesClean(t, c, false)
}

// nodesInterrupt: Ctrl-C while ib_write_bw runs in the containers: exit
// 130, report.json kept, nothing left in the API or containerd.
func nodesInterrupt(t *testing.T, c *cluster.Cluster) {
	long := strings.Replace(writeBW64K, "iterations: 200", "duration: 60s", 1)
	out := filepath.Join(t.TempDir(), "run")
	bound := bounds.fit(t, "rdmabench run until Ctrl-C", bounds.firstRound+bounds.inVM+bounds.interrupt, 3*time.Minute)
	begin := time.Now()
	r := startRunWithin(t, bounds.firstRound, "run", nodeScenario(t, toolsImage, "", "", long), "--kubeconfig", c.Kubeconfig, "--out", out, "--html", "none",
		"--preflight-timeout", bounds.preflight.String(), "--timeout", bound.String())
	t.Logf("first round after %.1fs", time.Since(begin).Seconds())
	for _, vm := range pair.VMs {
		waitInVM(t, vm, "ib_write_bw", bounds.inVM)
	}
	begin = time.Now()
	code := r.interruptWithin(t, bounds.interrupt)
	t.Logf("exit %d %.1fs after Ctrl-C", code, time.Since(begin).Seconds())
	t.Logf("rdmabench run after Ctrl-C:\n%s", r.stderr.String())
	if code != 130 {
		t.Errorf("exit %d; want 130", code)
	}
	if _, err := schema.Load(filepath.Join(out, "report.json")); err != nil {
		t.Errorf("report.json after Ctrl-C: %v", err)
	}
	assertNodesClean(t, c, false)
}

// waitInVM waits until a process whose command line holds name runs in
// vm (a container's processes are the VM's too, in their own namespaces).
func waitInVM(t *testing.T, vm *VM, name string, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := pair.Shell(ctx, vm, nil, "ps -o args | grep -v grep | grep -c "+name+" || true")
		cancel()
		if err == nil && strings.TrimSpace(out) != "0" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %s process within %s (%v)", vm.Name, name, bound, err)
		}
		time.Sleep(2 * time.Second) // each look is an ssh into an emulated VM
	}
}

// assertNodesClean: no pod of a run in the API, then, in both VMs'
// containerd (ctr), no task (process) and, with containers, no container:
// a deleted pod's processes are killed at once, its stopped containers
// and sandbox are removed by the kubelet's container garbage collection,
// which runs once a minute, so that wait is bounded at a minute and more
// at the host's pace (and made once, after the last run). The times are
// logged.
func assertNodesClean(t *testing.T, c *cluster.Cluster, containers bool) {
	t.Helper()
	begin := time.Now()
	waitClean(t, "pods in the API", bounds.apiClean, time.Second, func(ctx context.Context) ([]string, error) {
		pods, err := c.Client().CoreV1().Pods(corev1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: "rdmabench.io/run"})
		if err != nil {
			return nil, err
		}
		var left []string
		for _, p := range pods.Items {
			left = append(left, "pod "+p.Namespace+"/"+p.Name)
		}
		return left, nil
	})
	apiGone := time.Since(begin)
	runtime := func(kind string) func(ctx context.Context) ([]string, error) {
		return func(ctx context.Context) ([]string, error) {
			var left []string
			for _, vm := range pair.VMs {
				objs, err := pair.RuntimeObjects(ctx, vm, kind)
				if err != nil {
					return nil, err
				}
				left = append(left, objs...)
			}
			return left, nil
		}
	}
	// Each look is an ssh and a ctr in each emulated VM: every 3 s.
	waitClean(t, "tasks in containerd", bounds.tasksClean, 3*time.Second, runtime("task"))
	tasksGone := time.Since(begin)
	if !containers {
		t.Logf("clean: pods gone from the API after %.1fs, tasks from containerd after %.1fs", apiGone.Seconds(), tasksGone.Seconds())
		return
	}
	waitClean(t, "containers in containerd", bounds.containersClean, 3*time.Second, runtime("container"))
	t.Logf("clean: pods gone from the API after %.1fs, tasks from containerd after %.1fs, containers and sandboxes after %.1fs",
		apiGone.Seconds(), tasksGone.Seconds(), time.Since(begin).Seconds())
}

// waitClean polls list every interval until it is empty, failing the
// test with what is left after bound.
func waitClean(t *testing.T, what string, bound, interval time.Duration, list func(context.Context) ([]string, error)) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		left, err := list(ctx)
		cancel()
		if err == nil && len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: %s %v", what, bound, strings.Join(left, "; "), err)
		}
		time.Sleep(interval)
	}
}
