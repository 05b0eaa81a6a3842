// Package agent is the kube test lane's node agent: a virtual-kubelet
// provider that runs each pod's containers as processes in a network
// namespace of the pod's own (a primary veth on one bridge, one secondary
// veth per Multus network on another), writes Multus' network-status
// annotation, and serves exec and logs through virtual-kubelet's kubelet
// API so that client-go reaches it through the real apiserver.
package agent

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Options configures one node.
type Options struct {
	// Name is the node's name.
	Name string
	// Client talks to the apiserver.
	Client kubernetes.Interface
	// Fabric is the pod network, shared by every node of a cluster.
	Fabric *Fabric
	// TLS serves the kubelet API (certificate, and who may connect).
	TLS *tls.Config
	// Port is the kubelet API's port on NodeIP.
	Port int
	// NodeIP is the node's InternalIP; default 127.0.0.1.
	NodeIP string
	// Capacity is what the node offers (cpu, memory, pods, extended
	// resources such as nvidia.com/gpu and rdma/roce_gdr).
	Capacity corev1.ResourceList
	// Labels are added to the node's.
	Labels map[string]string
	// WorkDir holds the containers' logs.
	WorkDir string
	// BrokenImage says which images fail to pull (ImagePullBackOff).
	BrokenImage func(image string) bool
	// RootFS maps an image to a root file system to chroot into; "" (or a
	// nil func) runs the container on the host's file system.
	RootFS func(image string) string
	// ExtraBinDir, when set, is put first on every container's PATH: bound
	// read-only at /opt/rdmabench-test/bin in a pod with a root file
	// system, as is on the host's (the test stand-ins; never in an image).
	ExtraBinDir string
	// ExtraBin, when set, picks the extra bin dir per image instead ("":
	// none), so that images of one pod differ in the stand-ins they carry
	// (a nixl image with nixlbench's, the tools image without).
	ExtraBin func(image string) string
	// BackoffBase and BackoffMax bound the crash-loop back-off; defaults
	// 1s and 20s (a kubelet's are 10s and 5m: too slow for tests).
	BackoffBase, BackoffMax time.Duration
	// Log receives the agent's own messages; nil discards them.
	Log io.Writer
	// DevInfoDir is where the device-info files of the VFs it hands out
	// go (SRIOVResource); default WorkDir/var/run/k8s.cni.cncf.io/devinfo/dp.
	DevInfoDir string
	// Remote, when set, runs the node's pods on another machine (see
	// Remote); nil runs them here.
	Remote *Remote
}

// Agent is a running node.
type Agent struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	node   *nodeutil.Node

	events   record.EventBroadcaster
	recorder record.EventRecorder

	mu     sync.Mutex
	pods   map[string]*pod
	notify func(*corev1.Pod)
	// vfs are the node's units of SRIOVResource, one container each.
	vfs *vfPool
}

// Start registers the node and serves its pods until Stop; it returns
// once the node controller reports the node Ready, or an error within
// timeout.
func Start(ctx context.Context, opts Options, timeout time.Duration) (*Agent, error) {
	if opts.NodeIP == "" {
		opts.NodeIP = "127.0.0.1"
	}
	if opts.BackoffBase == 0 {
		opts.BackoffBase = time.Second
	}
	if opts.BackoffMax == 0 {
		opts.BackoffMax = 20 * time.Second
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, err
	}
	a := &Agent{opts: opts, pods: map[string]*pod{}}
	if opts.DevInfoDir == "" {
		opts.DevInfoDir = filepath.Join(opts.WorkDir, "var/run/k8s.cni.cncf.io/devinfo/dp")
		a.opts.DevInfoDir = opts.DevInfoDir
	}
	vfs := opts.Capacity[SRIOVResource]
	a.vfs = newVFPool(opts.DevInfoDir, int(vfs.Value()))
	a.ctx, a.cancel = context.WithCancel(context.Background())
	// Events as a kubelet sends them (Pulling/Failed, BackOff, Killing),
	// also used by virtual-kubelet's pod controller.
	a.events = record.NewBroadcaster()
	a.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: opts.Client.CoreV1().Events("")})
	a.recorder = a.events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: opts.Name})
	mux := http.NewServeMux()
	n, err := nodeutil.NewNode(opts.Name,
		func(nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
			return provider{a}, nil, nil
		},
		nodeutil.WithClient(nodeStatusClient{opts.Client}),
		nodeutil.AttachProviderRoutes(mux),
		func(cfg *nodeutil.NodeConfig) error {
			cfg.HTTPListenAddr = net.JoinHostPort(opts.NodeIP, strconv.Itoa(opts.Port))
			cfg.Handler = mux
			cfg.TLSConfig = opts.TLS
			cfg.NumWorkers = 4
			// The agent resolves the downward API itself, once the pod's
			// IP is known (virtual-kubelet would write "" for status.podIP).
			cfg.SkipDownwardAPIResolution = true
			cfg.EventRecorder = a.recorder
			cfg.StreamIdleTimeout = 10 * time.Minute
			cfg.StreamCreationTimeout = 30 * time.Second
			a.describe(&cfg.NodeSpec)
			return nil
		},
	)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", opts.Name, err)
	}
	a.node = n
	go func() { _ = n.Run(a.ctx) }()
	go a.housekeep()
	if err := n.WaitReady(ctx, timeout); err != nil {
		_ = a.Stop(context.Background())
		return nil, fmt.Errorf("node %s not ready: %w", opts.Name, err)
	}
	return a, nil
}

// describe fills in the node object virtual-kubelet registers.
func (a *Agent) describe(n *corev1.Node) {
	for k, v := range a.opts.Labels {
		n.Labels[k] = v
	}
	n.Labels["kubernetes.io/os"] = "linux"
	n.Labels["kubernetes.io/arch"] = "amd64"
	n.Labels["type"] = "rdmabench-kubecluster"
	n.Status.Capacity = a.opts.Capacity
	n.Status.Allocatable = a.opts.Capacity
	n.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: a.opts.NodeIP},
		{Type: corev1.NodeHostName, Address: a.opts.Name},
	}
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	n.Status.Conditions = []corev1.NodeCondition{
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
		cond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated"),
	}
	n.Status.Phase = corev1.NodeRunning
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(a.opts.Port)
	n.Status.NodeInfo = corev1.NodeSystemInfo{
		KubeletVersion: "v1.35.0-rdmabench-agent", OperatingSystem: "linux", Architecture: "amd64",
		ContainerRuntimeVersion: "rdmabench-process://0", KernelVersion: kernelVersion(),
	}
}

// DefaultCapacity is a GPU/RDMA node's: 64 CPUs, 512Gi, 110 pods, 8 GPUs
// and 8 RDMA devices.
func DefaultCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:     resource.MustParse("64"),
		corev1.ResourceMemory:  resource.MustParse("512Gi"),
		corev1.ResourcePods:    resource.MustParse("110"),
		"nvidia.com/gpu":       resource.MustParse("8"),
		"rdma/roce_gdr":        resource.MustParse("8"),
		corev1.ResourceStorage: resource.MustParse("100Gi"),
	}
}

func kernelVersion() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

// Name is the node's name.
func (a *Agent) Name() string { return a.opts.Name }

// Stop stops serving, then kills every pod's processes and removes their
// namespaces (bounded; pods are ended in parallel).
func (a *Agent) Stop(ctx context.Context) error {
	a.cancel()
	a.mu.Lock()
	a.notify = nil // virtual-kubelet has stopped listening
	a.mu.Unlock()
	if a.node != nil {
		select {
		case <-a.node.Done():
		case <-time.After(15 * time.Second):
		}
	}
	defer a.events.Shutdown()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	for _, p := range a.podList() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.terminate(0); err != nil {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
			}
		}()
	}
	waitGroup(&wg, 60*time.Second)
	a.mu.Lock()
	a.pods = map[string]*pod{}
	a.mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("node %s: %s", a.opts.Name, strings.Join(errs, "; "))
	}
	return nil
}

func (a *Agent) podList() []*pod {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*pod, 0, len(a.pods))
	for _, p := range a.pods {
		out = append(out, p)
	}
	return out
}

func (a *Agent) notifier() func(*corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.notify
}

// Processes lists every process still running in a network namespace of
// this node's pods (tests assert none is left after deletion).
func (a *Agent) Processes() []ProcessInfo {
	var out []ProcessInfo
	for _, p := range a.podList() {
		p.mu.Lock()
		pn := p.net
		p.mu.Unlock()
		if pn == nil {
			continue
		}
		for _, pid := range p.podPids(pn) {
			out = append(out, ProcessInfo{Node: a.opts.Name, Namespace: p.spec.Namespace, Pod: p.spec.Name,
				NetNS: pn.NetNS, PID: pid, Cmdline: cmdline(pid)})
		}
	}
	return out
}

func (a *Agent) brokenImage(image string) bool {
	return a.opts.BrokenImage != nil && a.opts.BrokenImage(image)
}

// extraBin is the folder put first on the PATH of a container of image.
func (a *Agent) extraBin(image string) string {
	if a.opts.ExtraBin != nil {
		return a.opts.ExtraBin(image)
	}
	return a.opts.ExtraBinDir
}

func (a *Agent) rootFS(image string) string {
	if a.opts.RootFS == nil {
		return ""
	}
	return a.opts.RootFS(image)
}

func (a *Agent) logf(format string, args ...any) {
	if a.opts.Log != nil {
		fmt.Fprintf(a.opts.Log, "agent %s: "+format+"\n", append([]any{a.opts.Name}, args...)...)
	}
}
