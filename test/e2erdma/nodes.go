package e2erdma

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// The VMs as real Kubernetes nodes: each runs the kubelet, containerd and
// runc, the CNI bridge and the RDMA device plugin from its node disk
// (images/softroce/node.sh), joined to the test control plane on this host.

// APIServerIP is this host as a VM sees it: QEMU's user-mode network maps
// 10.0.2.2 to the host's loopback, where the apiserver listens.
var APIServerIP = net.IPv4(10, 0, 2, 2)

// RDMAResource is the extended resource the VMs' device plugin advertises
// (rxe0, shared by up to RDMAShares pods per node).
const (
	RDMAResource = "rdma/rxe"
	RDMAShares   = 2
)

// NodeLabel marks the VM nodes (scenarios select them by it).
const NodeLabel = "rdmabench.io/soft-roce"

// JoinNodes are the VMs as the test cluster's joining machines: each
// kubelet reports its data address (where rxe0 lives) and is reached
// through its QEMU port forward.
func (p *Pair) JoinNodes() []cluster.JoinNode {
	var out []cluster.JoinNode
	for _, vm := range p.VMs {
		out = append(out, cluster.JoinNode{Name: vm.Name, IP: net.ParseIP(vm.DataIP),
			KubeletAddr: "127.0.0.1:" + strconv.Itoa(vm.KubeletPort)})
	}
	return out
}

// SSH is the command line that runs a shell line on vm (host key checked).
func (p *Pair) SSH(vm *VM) []string {
	return []string{"ssh", "-i", p.KeyFile, "-p", strconv.Itoa(vm.SSHPort),
		"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + p.KnownHosts,
		"-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "LogLevel=ERROR", "root@127.0.0.1"}
}

// Shell runs script on vm with stdin, bounded by ctx, and returns its
// combined output.
func (p *Pair) Shell(ctx context.Context, vm *VM, stdin []byte, script string) (string, error) {
	argv := append(p.SSH(vm), script)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %s: %w\n%s", vm.Name, firstLine(script), err, out)
	}
	return string(out), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// NodeJoin is how one VM became a node.
type NodeJoin struct {
	Name string
	// Ready is the time from join.sh's start to the node's Ready
	// condition with the RDMA resource allocatable (read from the API).
	Ready time.Duration
	// Joined is join.sh's whole run: containerd, the kubelet and the
	// device plugin started, then the images imported.
	Joined time.Duration
	// Output is join.sh's step lines.
	Output string
}

// Join makes both VMs nodes of c, in parallel: their kubelet files are
// written to /etc/kubernetes over ssh, join.sh runs, and Join returns once
// join.sh ended on both and both nodes are Ready with RDMAShares of
// RDMAResource allocatable. Bounded by ctx.
func (p *Pair) Join(ctx context.Context, c *cluster.Cluster) ([2]NodeJoin, error) {
	var res [2]NodeJoin
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, vm := range p.VMs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = p.join(ctx, c, i, vm)
		}()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

func (p *Pair) join(ctx context.Context, c *cluster.Cluster, i int, vm *VM) (NodeJoin, error) {
	nj := NodeJoin{Name: vm.Name}
	if !vm.NodeDisk {
		return nj, fmt.Errorf("%s has no node disk (make -C images softroce-node)", vm.Name)
	}
	server := "https://" + net.JoinHostPort(APIServerIP.String(), strconv.Itoa(c.APIServerPort))
	files, err := c.JoinFiles(vm.Name, server)
	if err != nil {
		return nj, err
	}
	for name, b := range files {
		if _, err := p.Shell(ctx, vm, b, "mkdir -p /etc/kubernetes && umask 077 && cat > /etc/kubernetes/"+name); err != nil {
			return nj, err
		}
	}
	peer := p.VMs[1-i]
	env := fmt.Sprintf("NODE_NAME=%s NODE_IP=%s POD_CIDR=%s ROUTES=%s=%s LABELS=%s=true RDMA_SHARES=%d",
		vm.Name, vm.DataIP, podCIDR(i), podCIDR(1-i), peer.DataIP, NodeLabel, RDMAShares)
	start := time.Now()
	ready := make(chan error, 1)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		err := waitNodeReady(wctx, c.Client(), vm.Name)
		nj.Ready = time.Since(start)
		ready <- err
	}()
	nj.Output, err = p.Shell(ctx, vm, nil, "env "+env+" sh /node/join.sh")
	nj.Joined = time.Since(start)
	if err != nil {
		return nj, err
	}
	if err := <-ready; err != nil {
		log, _ := p.Shell(context.Background(), vm, nil, "tail -20 /var/log/kubelet.log; tail -5 /var/log/rdmaplugin.log")
		return nj, fmt.Errorf("%s: %w\n%s", vm.Name, err, log)
	}
	return nj, nil
}

// podCIDR is the i-th VM's pod range for the CNI bridge.
func podCIDR(i int) string { return fmt.Sprintf("10.244.%d.0/24", i+1) }

// waitNodeReady polls the node until it is Ready and its allocatable holds
// RDMAShares of RDMAResource (the device plugin registered), bounded by ctx.
func waitNodeReady(ctx context.Context, cs kubernetes.Interface, name string) error {
	last := "not registered"
	for {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = nodeState(n)
			q := n.Status.Allocatable[corev1.ResourceName(RDMAResource)]
			if strings.HasPrefix(last, "Ready") && q.Value() == RDMAShares {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready with %d %s: %s (%w)", name, RDMAShares, RDMAResource, last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func nodeState(n *corev1.Node) string {
	q := n.Status.Allocatable[corev1.ResourceName(RDMAResource)]
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return fmt.Sprintf("Ready, %s allocatable %s", RDMAResource, q.String())
			}
			return fmt.Sprintf("NotReady (%s: %s)", c.Reason, c.Message)
		}
	}
	return "no Ready condition yet"
}

// Leave runs leave.sh on both VMs: the kubelet, the device plugin and
// containerd stop and the node's state goes. An error says what was left
// in containerd (leave.sh removes it and exits 1).
func (p *Pair) Leave(ctx context.Context) error {
	var errs []error
	for _, vm := range p.VMs {
		if _, err := p.Shell(ctx, vm, nil, "sh /node/leave.sh"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RuntimeObjects lists what containerd on vm holds for Kubernetes (its
// k8s.io namespace), through its own client, of one kind: "container"
// (pod sandboxes are containers too, labelled
// io.cri-containerd.kind=sandbox) or "task" (a running process); each
// "VM: KIND ID". Empty once the pods are gone. One ssh and one ctr (a Go
// program starting under emulation) per call: the lane polls it.
func (p *Pair) RuntimeObjects(ctx context.Context, vm *VM, kind string) ([]string, error) {
	if kind != "container" && kind != "task" {
		return nil, fmt.Errorf("runtime objects: kind %q, want container or task", kind)
	}
	out, err := p.Shell(ctx, vm, nil, `export PATH=/node/bin:$PATH
ctr -n k8s.io `+kind+`s ls -q | sed 's/^/`+kind+` /'`)
	if err != nil {
		return nil, err
	}
	var objs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			objs = append(objs, vm.Name+": "+l)
		}
	}
	return objs, nil
}
