package e2erdma

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report"
	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// The node agent on the VMs (agent.Remote: pods as processes started over
// ssh) is kept for the real-nixlbench lane, whose NIXL build is copied into
// the VMs rather than into an image; the VMs as real nodes (kubelet,
// containerd) are nodes_test.go.

// vmShell is the ssh command line that runs one shell line on a VM (the
// node agent's agent.Remote.Shell).
func vmShell(vm *VM) []string { return pair.SSH(vm) }

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

func pathDetail(p *report.PathProof) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("verified %v: %s", p.Verified, p.Detail)
}
