package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// pod is one pod on this node: its namespace, its containers' processes
// and the status a kubelet would report.
type pod struct {
	agent *Agent

	// notifyMu orders status notifications: each takes its snapshot
	// under it, so the last one virtual-kubelet gets is the newest.
	notifyMu sync.Mutex

	mu         sync.Mutex
	spec       *corev1.Pod // the pod as created, plus network-status
	net        *PodNet
	netErr     string
	containers []*container
	inits      []*container // init containers, run in order before containers
	initFailed bool
	started    metav1.Time
	deleting   bool
	pgids      map[int]bool // process groups (hostNetwork pods)
	gone       bool         // processes killed and namespace removed
	dir        string       // logs and, with a root file system, its layer
	root       *podRoot     // the pod's root file system; nil on the host's

	ctx       context.Context // cancelled when the pod is deleted
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	startDone chan struct{} // closed when start has returned
	done      chan struct{} // closed when teardown has finished
}

func newPod(a *Agent, spec *corev1.Pod) *pod {
	p := &pod{agent: a, spec: spec.DeepCopy(), started: metav1.Now(),
		startDone: make(chan struct{}), done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(a.ctx)
	dir := filepath.Join(a.opts.WorkDir, "pods", fmt.Sprintf("%s_%s_%s", spec.Namespace, spec.Name, spec.UID))
	p.dir = dir
	reason := "ContainerCreating"
	if len(spec.Spec.InitContainers) > 0 {
		reason = "PodInitializing"
	}
	for _, c := range spec.Spec.InitContainers {
		p.inits = append(p.inits, &container{
			spec:   c,
			state:  corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}},
			logDir: filepath.Join(dir, c.Name),
		})
	}
	for _, c := range spec.Spec.Containers {
		p.containers = append(p.containers, &container{
			spec:   c,
			state:  corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
			logDir: filepath.Join(dir, c.Name),
		})
	}
	return p
}

// start sets the pod's network up, publishes network-status and starts
// every container's restart loop. It runs on its own goroutine.
func (p *pod) start() {
	defer close(p.startDone)
	ctx := p.ctx
	if ctx.Err() != nil {
		return
	}
	if p.agent.opts.Remote != nil && !p.spec.Spec.HostNetwork {
		p.mu.Lock()
		p.netErr = fmt.Sprintf("node %s is a machine reached over %s: it runs hostNetwork pods only", p.agent.opts.Name, p.agent.opts.Remote.Shell[0])
		p.mu.Unlock()
		p.notify()
		return
	}
	if p.spec.Spec.HostNetwork {
		p.mu.Lock()
		p.net = &PodNet{}
		p.mu.Unlock()
		if p.rootReady() {
			p.startContainers(ctx)
		}
		return
	}
	vfs, err := p.agent.vfs.allocate(p)
	var nets []string
	if err == nil {
		nets, err = ParseNetworks(p.spec.Annotations[NetworksAnnotation], p.spec.Namespace)
	}
	var pn *PodNet
	if err == nil {
		pn, err = p.agent.opts.Fabric.Setup(ctx, nets)
	}
	if err == nil {
		pn.giveVFs(vfs)
	}
	p.mu.Lock()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
		_ = p.agent.opts.Fabric.Teardown(context.Background(), pn)
	}
	if err != nil {
		p.netErr = err.Error()
		p.mu.Unlock()
		p.notify()
		return
	}
	p.net = pn
	status := NetworkStatus(pn.Attachments)
	if p.spec.Annotations == nil {
		p.spec.Annotations = map[string]string{}
	}
	p.spec.Annotations[NetworkStatusAnnotation] = status
	p.mu.Unlock()
	if err := p.publishNetworkStatus(ctx, status); err != nil {
		p.agent.logf("pod %s/%s: network-status: %v", p.spec.Namespace, p.spec.Name, err)
	}
	if p.rootReady() {
		p.startContainers(ctx)
	}
}

// rootReady sets the pod's root file system up (when its image has one);
// a failure is reported as the sandbox's, as a runtime's would be.
func (p *pod) rootReady() bool {
	err := p.setupRoot(p.dir)
	if err == nil {
		return true
	}
	p.mu.Lock()
	p.netErr = err.Error()
	p.mu.Unlock()
	p.notify()
	return false
}

// startContainers starts each container's restart loop, or reports its
// image as unpullable.
func (p *pod) startContainers(ctx context.Context) {
	all := append(append([]*container{}, p.inits...), p.containers...)
	for _, c := range all {
		if !p.agent.brokenImage(c.spec.Image) {
			continue
		}
		p.event(corev1.EventTypeWarning, "Failed", "Failed to pull image %q: image not found (marked broken by the test cluster)", c.spec.Image)
		p.event(corev1.EventTypeWarning, "Failed", "Error: ErrImagePull")
		p.event(corev1.EventTypeNormal, "BackOff", "Back-off pulling image %q", c.spec.Image)
		p.mu.Lock()
		c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason:  "ImagePullBackOff",
			Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: image %q not found (marked broken by the test cluster)", c.spec.Image, c.spec.Image),
		}}
		p.mu.Unlock()
	}
	for _, c := range p.inits {
		if p.agent.brokenImage(c.spec.Image) {
			p.notify()
			return // the pod cannot initialise
		}
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if len(p.inits) > 0 && !p.runInits(ctx) {
			return
		}
		p.startMain(ctx)
	}()
}

// startMain starts every main container's restart loop.
func (p *pod) startMain(ctx context.Context) {
	for _, c := range p.containers {
		if p.agent.brokenImage(c.spec.Image) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.run(ctx, c, func(code int32) bool { return shouldRestart(p.spec.Spec.RestartPolicy, code) })
		}()
	}
	p.notify()
}

// publishNetworkStatus patches the annotation onto the pod, as Multus
// does, so clients read it from the pod's metadata.
func (p *pod) publishNetworkStatus(ctx context.Context, status string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{NetworkStatusAnnotation: status}}})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := p.agent.opts.Client.CoreV1().Pods(p.spec.Namespace).Patch(ctx, p.spec.Name,
		types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// terminate kills every process in the pod's namespace (SIGTERM, grace,
// SIGKILL), waits for the restart loops, removes the namespace and its
// veths, and reports the final status. Safe to call more than once.
func (p *pod) terminate(grace time.Duration) error {
	p.mu.Lock()
	if p.deleting {
		p.mu.Unlock()
		<-p.done
		return nil
	}
	p.deleting = true
	p.mu.Unlock()
	defer close(p.done)
	for _, c := range p.containers {
		p.event(corev1.EventTypeNormal, "Killing", "Stopping container %s", c.spec.Name)
	}
	p.cancel()
	select {
	case <-p.startDone:
	case <-time.After(30 * time.Second):
	}
	var errs []error
	if p.net != nil {
		if err := p.kill(p.net, grace); err != nil {
			errs = append(errs, err)
		}
	}
	waitGroup(&p.wg, 15*time.Second)
	if p.net != nil {
		// Anything that slipped in while the loops wound down.
		if err := p.kill(p.net, 0); err != nil {
			errs = append(errs, err)
		}
		if p.net.NetNS != "" {
			if err := p.agent.opts.Fabric.Teardown(context.Background(), p.net); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := p.removeRoot(); err != nil {
		errs = append(errs, err)
	}
	p.agent.vfs.release(string(p.spec.UID))
	p.mu.Lock()
	for _, c := range append(append([]*container{}, p.inits...), p.containers...) {
		if c.state.Terminated == nil {
			c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", Message: "pod deleted", FinishedAt: metav1.Now()}}
		}
	}
	p.gone = true
	p.mu.Unlock()
	p.notify()
	if len(errs) > 0 {
		return fmt.Errorf("pod %s/%s: %v", p.spec.Namespace, p.spec.Name, errs)
	}
	return nil
}

// event records a kubelet-style event on the pod.
func (p *pod) event(kind, reason, format string, args ...any) {
	p.agent.recorder.Eventf(p.spec, kind, reason, format, args...)
}

// waitGroup waits for wg, at most d.
func waitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// notify hands the current status to virtual-kubelet.
func (p *pod) notify() {
	p.notifyMu.Lock()
	defer p.notifyMu.Unlock()
	if f := p.agent.notifier(); f != nil {
		f(p.snapshot())
	}
}
