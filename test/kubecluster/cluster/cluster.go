// Package cluster starts the kube test lane's cluster on this machine: an
// embedded etcd, kube-apiserver, kube-scheduler and kube-controller-manager
// (built from the k8s.io/kubernetes module, see EnsureBinaries), and N node
// agents (package agent) that run pods as processes in network namespaces.
// Everything listens on loopback; pod addresses exist only inside the
// namespaces it creates. Stop removes every process, namespace, veth and
// bridge it made.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Options says what to start. The zero value is a 3-node cluster in a
// temporary folder with binaries from DefaultBinDir.
type Options struct {
	// Nodes is the number of node agents; default 3.
	Nodes int
	// NodePrefix names the nodes NodePrefix1, NodePrefix2, ...; default
	// "node-".
	NodePrefix string
	// Capacity of each node; default agent.DefaultCapacity().
	Capacity corev1.ResourceList
	// WorkDir holds certificates, logs and kubeconfigs; default a new
	// temporary folder that Stop removes.
	WorkDir string
	// BinDir holds kube-apiserver, kube-scheduler and
	// kube-controller-manager; default DefaultBinDir(). Start builds them
	// there when missing (EnsureBinaries).
	BinDir string
	// Kubeconfig is where the admin kubeconfig is written; default
	// WorkDir/kubeconfig.
	Kubeconfig string
	// PrimaryCIDR and SecondaryCIDR are the pod network and the stand-in
	// Multus network; defaults 10.244.0.0/16 and 10.245.0.0/16. They exist
	// only inside the pods' namespaces.
	PrimaryCIDR, SecondaryCIDR string
	// BrokenImages fail to pull (ImagePullBackOff) in addition to any image
	// whose name contains "broken" or "does-not-exist".
	BrokenImages []string
	// RootFS maps an image to a root file system (a directory, e.g. from
	// UnpackImage) that its pods run in: each pod gets its own writable
	// layer over it, /proc, /sys, /dev, /tmp in a mount namespace of its
	// own (agent/rootfs.go). nil, or "" for an image, runs containers on
	// the host's file system. A broken image never maps.
	RootFS func(image string) string
	// ExtraBinDir is put first on every container's PATH (read-only at
	// agent.ExtraBinMount in a pod with a root file system): the test
	// stand-ins, which the production image must not contain.
	ExtraBinDir string
	// ExtraBin, when set, picks the extra bin dir per image instead (the
	// images of one pod may differ in the stand-ins they carry).
	ExtraBin func(image string) string
	// BackoffBase and BackoffMax bound the crash-loop back-off (defaults
	// 1s and 20s).
	BackoffBase, BackoffMax time.Duration
	// StartTimeout bounds each start-up wait; default 90s.
	StartTimeout time.Duration
	// Log receives progress and the node agents' messages; nil discards.
	Log io.Writer
	// Klog receives client-go's and virtual-kubelet's klog lines ("Caches
	// are synced for …"); nil: Log.
	Klog io.Writer
	// RemoteNodes are nodes on other machines (the soft-RoCE VMs), after
	// the Nodes local ones; with RemoteNodes, Nodes defaults to 0.
	RemoteNodes []RemoteNode
	// JoinNodes are machines that join with a kubelet of their own
	// (JoinFiles); with JoinNodes, Nodes defaults to 0.
	JoinNodes []JoinNode
	// APIServerIPs are more addresses for the apiserver's certificate:
	// the ones joined machines reach this host by (10.0.2.2 from a QEMU
	// guest on a user-mode network, which QEMU maps to this host's loopback).
	APIServerIPs []net.IP
	// SRIOVNetworks are secondary networks ("namespace/name") whose
	// attachments the agents report with a device-info (a PCI function
	// and its RDMA device), as the SR-IOV CNI does through Multus.
	SRIOVNetworks []string
}

// RemoteNode is a node whose pods run on another machine (agent.Remote).
type RemoteNode struct {
	Name   string
	Remote agent.Remote
	// Labels are added to the node's, beside the defaults.
	Labels map[string]string
}

// Cluster is a running test cluster.
type Cluster struct {
	// Kubeconfig is the admin kubeconfig file's path.
	Kubeconfig string
	// WorkDir holds certificates, logs (logs/*.log) and kubeconfigs.
	WorkDir string
	// Server is the apiserver's URL.
	Server string
	// APIServerPort is its port on 127.0.0.1.
	APIServerPort int

	opts      Options
	ownsDir   bool
	id        string
	etcd      *runetcd.Server
	pki       *pki
	tokens    map[string]string // user → token
	apiserver *process
	scheduler *process
	ctrlmgr   *process
	fabric    *agent.Fabric
	mu        sync.Mutex // guards agents once the cluster runs (AddNode, RemoveNode)
	agents    []*agent.Agent
	egress    *egressProxy // the way to joined kubelets
	client    kubernetes.Interface
	stopOnce  sync.Once
	stopErr   error
}

func (o *Options) defaults() error {
	if o.Nodes == 0 && len(o.RemoteNodes) == 0 && len(o.JoinNodes) == 0 {
		o.Nodes = 3
	}
	if o.NodePrefix == "" {
		o.NodePrefix = "node-"
	}
	if o.Capacity == nil {
		o.Capacity = agent.DefaultCapacity()
	}
	if o.PrimaryCIDR == "" {
		o.PrimaryCIDR = "10.244.0.0/16"
	}
	if o.SecondaryCIDR == "" {
		o.SecondaryCIDR = "10.245.0.0/16"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 90 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.BinDir == "" {
		d, err := DefaultBinDir()
		if err != nil {
			return err
		}
		o.BinDir = d
	}
	return nil
}

// Start starts a cluster and returns once the apiserver is ready and every
// node is Ready. On error everything already started is removed.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := Available(); err != nil {
		return nil, err
	}
	// client-go and virtual-kubelet log through klog: to Klog (else Log),
	// not stderr.
	klog.LogToStderr(false)
	if opts.Klog != nil {
		klog.SetOutput(opts.Klog)
	} else {
		klog.SetOutput(opts.Log)
	}
	c := &Cluster{opts: opts, id: randomID(), WorkDir: opts.WorkDir}
	if c.WorkDir == "" {
		d, err := os.MkdirTemp("", "rdmabench-kubecluster-*")
		if err != nil {
			return nil, err
		}
		c.WorkDir, c.ownsDir = d, true
	}
	c.Kubeconfig = opts.Kubeconfig
	if c.Kubeconfig == "" {
		c.Kubeconfig = filepath.Join(c.WorkDir, "kubeconfig")
	}
	if err := c.start(ctx); err != nil {
		stopErr := c.Stop()
		if stopErr != nil {
			err = fmt.Errorf("%w (and cleaning up: %v)", err, stopErr)
		}
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	SweepLeftovers(c.logf)
	if err := c.claim(); err != nil {
		return err
	}
	for _, d := range []string{"pki", "logs", "nodes"} {
		if err := os.MkdirAll(filepath.Join(c.WorkDir, d), 0o755); err != nil {
			return err
		}
	}
	c.logf("building control-plane binaries into %s when missing", c.opts.BinDir)
	if err := EnsureBinaries(ctx, c.opts.BinDir, nil); err != nil {
		return err
	}
	steps := []struct {
		name string
		f    func(context.Context) error
	}{
		{"etcd", c.startEtcd},
		{"credentials", c.writeCredentials},
		{"kube-apiserver", c.startAPIServer},
		{"kube-scheduler and kube-controller-manager", c.startControllers},
		{"nodes", c.startNodes},
	}
	for _, s := range steps {
		t := time.Now()
		if err := s.f(ctx); err != nil {
			return fmt.Errorf("start %s: %w", s.name, err)
		}
		c.logf("%s up in %s", s.name, time.Since(t).Round(time.Millisecond))
	}
	return nil
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	srv, err := runetcd.Start(ctx, runetcd.Config{})
	if err != nil {
		return err
	}
	c.etcd = srv
	return nil
}

// Client is an admin clientset (system:masters) for the cluster.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// RESTConfig is the admin client configuration (a copy).
func (c *Cluster) RESTConfig() *rest.Config { return c.restConfig("admin") }

// NodeNames are the nodes' names, in order.
func (c *Cluster) NodeNames() []string {
	agents := c.agentList()
	names := make([]string, 0, len(agents))
	for _, a := range agents {
		names = append(names, a.Name())
	}
	return names
}

// Processes lists every process still running in a pod's network
// namespace on any node.
func (c *Cluster) Processes() []agent.ProcessInfo {
	var out []agent.ProcessInfo
	for _, a := range c.agentList() {
		out = append(out, a.Processes()...)
	}
	return out
}

// NetNSes lists the network namespaces of this cluster that exist on the
// host now (pods' ones; empty once all pods are gone).
func (c *Cluster) NetNSes() []string {
	entries, _ := os.ReadDir("/run/netns")
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), c.prefix()+"-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// prefix starts the names of everything the cluster creates on the host.
func (c *Cluster) prefix() string { return "kc" + c.id }

func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Log, "kubecluster: "+format+"\n", args...)
}

func randomID() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// agentList is the running node agents, a copy.
func (c *Cluster) agentList() []*agent.Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*agent.Agent(nil), c.agents...)
}
