package e2ekube

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestNCCLAcrossPods runs one nccl sendrecv job over two pools of one pod
// each: mpirun in the first pod starts the second rank in the other pod
// through the run's own sshd (runner/mpi), every rank is a separate
// process of the nccl-tests stand-in in its own pod, bootstrapping at
// NCCL_COMM_ID and moving the bytes over the secondary network; the result
// is parsed from rank 0. The pods run from the tools image (mpirun, sshd);
// the stand-ins come from the lane's extra bin folder, first on PATH. The test
// cluster has no GPU device plugin, so the kube backend is told to assume
// GPUs (kube.Options.AssumeGPUs, tests only). Afterwards nothing may be
// left: no pod, no sshd, no rank.
func TestNCCLAcrossPods(t *testing.T) {
	c := needCluster(t)
	for _, bin := range []string{"/usr/sbin/sshd", "/usr/bin/mpirun"} {
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("%s missing (apt-get install openssh-server openmpi-bin)", bin)
		}
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin+"/", "../../testdata/standins/sendrecv_perf").CombinedOutput(); err != nil {
		t.Fatalf("build the stand-in: %v\n%s", err, out)
	}
	_ = os.Chmod(bin, 0o755)
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: kube-nccl
backend: kube
cluster:
  namespace: e2e-nccl
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
  - name: nccl-sendrecv
    tool: nccl
    from: prefill
    to: decode
    timeout: 120s
    args:
      collective: sendrecv
      minSize: 1KiB
      maxSize: 1MiB
      stepFactor: 4
      iterations: 5
`
	sc, err := scenarios.LoadBytes("kube-nccl.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := runner.NewRunID(time.Now())
	be, err := kube.New(sc, kube.Options{Client: c.Client(), Config: c.RESTConfig(), RunID: id, Progress: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out := t.TempDir()
	var progress strings.Builder
	rep, err := runner.Run(ctx, runner.Config{Plan: p, Backend: be, Scenario: sc, OutDir: out, RunID: id, Progress: &progress})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Errorf("run: %v", err)
	}
	if rep == nil || len(rep.Results) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	r := rep.Results[0]
	raw, _ := os.ReadFile(filepath.Join(out, r.RawOutputs[0]))
	t.Logf("%s: %s %s\n%s\n%s", r.Test, r.Verdict, r.Reason, strings.Join(r.Commands, "\n"), raw)
	if r.Verdict != schema.VerdictPass || len(r.Samples) != 6 || r.BestBps <= 0 {
		t.Fatalf("verdict %s (%s), %d samples, best %v", r.Verdict, r.Reason, len(r.Samples), r.BestBps)
	}
	// Two ranks, two processes, two pods: rank 0's device list names two
	// pids, and the second pod's address is in the launcher's -H.
	pids := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 6 && f[1] == "Rank" && f[5] == "Pid" {
			pids[f[6]] = true
		}
	}
	var addrs []string
	for _, ep := range rep.Endpoints {
		addrs = append(addrs, ep.Address)
		if ep.Interface == "" || ep.Pod == "" {
			t.Errorf("endpoint %+v", ep)
		}
	}
	if len(pids) != 2 || len(addrs) != 2 || addrs[0] == addrs[1] || !strings.Contains(r.Commands[0], addrs[1]+":1") ||
		!strings.Contains(r.Commands[0], "NCCL_SOCKET_IFNAME=net1") {
		t.Errorf("ranks %v, endpoints %v, command %s", pids, addrs, r.Commands[0])
	}
	assertNothingLeft(t, c)
	// The run's key folder (pods share the host's /tmp on this lane).
	if left, _ := filepath.Glob("/tmp/rdmabench-" + id + "/ssh"); len(left) > 0 {
		t.Errorf("left on the nodes: %v", left)
	}
}
