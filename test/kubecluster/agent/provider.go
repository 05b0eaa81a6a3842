package agent

import (
	"context"
	"io"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// provider is the virtual-kubelet provider: the pod controller calls it
// for every pod bound to this node, and the kubelet API for exec and logs.
type provider struct{ a *Agent }

func key(ns, name string) string { return ns + "/" + name }

func (pr provider) lookup(ns, name string) (*pod, error) {
	pr.a.mu.Lock()
	defer pr.a.mu.Unlock()
	p, ok := pr.a.pods[key(ns, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s not found on node %s", ns, name, pr.a.opts.Name)
	}
	return p, nil
}

// CreatePod starts the pod in the background; its status follows through
// NotifyPods.
func (pr provider) CreatePod(_ context.Context, spec *corev1.Pod) error {
	pr.a.mu.Lock()
	if _, ok := pr.a.pods[key(spec.Namespace, spec.Name)]; ok {
		pr.a.mu.Unlock()
		return nil
	}
	p := newPod(pr.a, spec)
	pr.a.pods[key(spec.Namespace, spec.Name)] = p
	pr.a.mu.Unlock()
	go p.start()
	return nil
}

// UpdatePod keeps the pod's metadata current (labels, annotations); a
// kubelet does not restart containers for it either.
func (pr provider) UpdatePod(_ context.Context, spec *corev1.Pod) error {
	p, err := pr.lookup(spec.Namespace, spec.Name)
	if err != nil {
		return err
	}
	p.mu.Lock()
	status := p.spec.Annotations[NetworkStatusAnnotation]
	p.spec.Labels = spec.Labels
	p.spec.Annotations = spec.Annotations
	if status != "" {
		if p.spec.Annotations == nil {
			p.spec.Annotations = map[string]string{}
		}
		p.spec.Annotations[NetworkStatusAnnotation] = status
	}
	p.mu.Unlock()
	return nil
}

// DeletePod ends the pod honouring its grace period, in the background:
// the final status goes out through NotifyPods, and the pod controller then
// removes the object from the API.
func (pr provider) DeletePod(_ context.Context, spec *corev1.Pod) error {
	p, err := pr.lookup(spec.Namespace, spec.Name)
	if err != nil {
		return err
	}
	grace := 30 * time.Second
	if spec.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*spec.DeletionGracePeriodSeconds) * time.Second
	} else if spec.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*spec.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	go func() {
		if err := p.terminate(grace); err != nil {
			pr.a.logf("%v", err)
		}
		pr.a.mu.Lock()
		if pr.a.pods[key(spec.Namespace, spec.Name)] == p {
			delete(pr.a.pods, key(spec.Namespace, spec.Name))
		}
		pr.a.mu.Unlock()
	}()
	return nil
}

// GetPod returns the pod with its current status.
func (pr provider) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	p, err := pr.lookup(ns, name)
	if err != nil {
		return nil, err
	}
	return p.snapshot(), nil
}

// GetPodStatus returns the pod's current status.
func (pr provider) GetPodStatus(ctx context.Context, ns, name string) (*corev1.PodStatus, error) {
	p, err := pr.GetPod(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return &p.Status, nil
}

// GetPods lists the pods this node runs.
func (pr provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, p := range pr.a.podList() {
		out = append(out, p.snapshot())
	}
	return out, nil
}

// NotifyPods registers virtual-kubelet's status callback.
func (pr provider) NotifyPods(_ context.Context, f func(*corev1.Pod)) {
	pr.a.mu.Lock()
	pr.a.notify = f
	pr.a.mu.Unlock()
}

// RunInContainer serves exec.
func (pr provider) RunInContainer(ctx context.Context, ns, name, container string, cmd []string, attach api.AttachIO) error {
	p, err := pr.lookup(ns, name)
	if err != nil {
		return err
	}
	return p.exec(ctx, container, cmd, attach)
}

// GetContainerLogs serves logs.
func (pr provider) GetContainerLogs(ctx context.Context, ns, name, container string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	p, err := pr.lookup(ns, name)
	if err != nil {
		return nil, err
	}
	return p.logs(ctx, container, opts)
}

// AttachToContainer is not supported: containers have no stdin.
func (pr provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errdefs.InvalidInput("attach is not supported by the test cluster's node agent")
}

// GetStatsSummary is not supported.
func (pr provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return nil, errdefs.InvalidInput("stats are not supported by the test cluster's node agent")
}

// GetMetricsResource is not supported.
func (pr provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, errdefs.InvalidInput("metrics are not supported by the test cluster's node agent")
}

// PortForward serves port-forward: a stream to a port inside the pod's
// network namespace.
func (pr provider) PortForward(ctx context.Context, ns, name string, port int32, stream io.ReadWriteCloser) error {
	p, err := pr.lookup(ns, name)
	if err != nil {
		return err
	}
	return p.portForward(ctx, port, stream)
}
