package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// DefaultStartupTimeout bounds the wait for pods when the scenario gives
// no cluster.startupTimeout.
const DefaultStartupTimeout = 5 * time.Minute

// StartupError is a pod that could not start: unschedulable, an image that
// cannot be pulled, a crash loop, a refused create. It carries the
// cluster's own reason; the run exits 3.
type StartupError struct {
	Pod    string
	Kind   string // what could not be made: "pod" (default), "configmap"
	Reason string // FailedScheduling, ImagePullBackOff, CrashLoopBackOff, Forbidden, Timeout …
	Msg    string
}

func (e *StartupError) Error() string {
	if e.Kind != "" && e.Kind != "pod" {
		return fmt.Sprintf("kube: %s %s cannot be created: %s: %s", e.Kind, e.Pod, e.Reason, e.Msg)
	}
	return fmt.Sprintf("kube: pod %s cannot start: %s: %s", e.Pod, e.Reason, e.Msg)
}

// Provision creates the namespace (when missing), the run's owner object
// and one pod per endpoint, waits until every pod is Ready (bounded by
// cluster.startupTimeout), and returns the endpoints with their node, pod
// and data address. A pod that cannot start fails at once with the
// cluster's reason; the caller's Cleanup removes what was created.
func (b *Backend) Provision(ctx context.Context, eps []endpoint.Endpoint) ([]endpoint.Endpoint, error) {
	// The platform decides how networks are asked for (Multus, GKE).
	if _, err := b.platform(ctx); err != nil {
		return nil, err
	}
	// Every pod is built first: a pod patch or a quantity that cannot
	// work fails before anything exists.
	pods := make([]*corev1.Pod, len(eps))
	for i, ep := range eps {
		pod, err := b.podFor(ep, nil)
		if err != nil {
			return nil, err
		}
		pods[i] = pod
	}
	level := podSecurityLevel(pods)
	if err := b.ensureNamespace(ctx, level); err != nil {
		return nil, err
	}
	if err := b.checkNetworks(ctx, eps); err != nil {
		return nil, err
	}
	b.requestNetworkResources(pods, eps)
	if err := b.checkAdmission(ctx, pods, level); err != nil {
		return nil, err
	}
	owner, err := b.ensureOwner(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.createPods(ctx, eps, pods, owner); err != nil {
		return nil, err
	}
	timeout := DefaultStartupTimeout
	if d := b.sc.Cluster.StartupTimeout.Value; d > 0 {
		timeout = d
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := make([]string, len(eps))
	for i, ep := range eps {
		names[i] = b.podName(ep.Name)
	}
	ready, err := b.waitReady(wctx, names)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, b.timeoutError(timeout, names, ready, err)
		}
		return nil, err
	}
	out := make([]endpoint.Endpoint, len(eps))
	for i, ep := range eps {
		pod := ready[b.podName(ep.Name)]
		if pod == nil {
			return nil, &StartupError{Pod: b.podName(ep.Name), Reason: "NotFound",
				Msg: "the pod disappeared while the run waited for it (deleted by someone, or evicted)"}
		}
		if out[i], err = b.settle(ctx, ep, pod); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// settle fills an endpoint from its ready pod: node, address, the RDMA
// device of its data network and, on a pod with several networks, its
// rails.
func (b *Backend) settle(ctx context.Context, ep endpoint.Endpoint, pod *corev1.Pod) (endpoint.Endpoint, error) {
	hints, err := b.place(ctx, &ep, pod)
	if err != nil {
		return ep, err
	}
	if ep.ResolveDevice && hints.From == "" {
		hints = b.deviceHints(ctx, ep)
	}
	if err := b.disc.ResolveDevice(ctx, &ep, hints); err != nil {
		return ep, err
	}
	if ep.Device != "" {
		b.progressf("%s: RDMA device %s port %d%s (%s)", ep.Name, ep.Device, ep.Port, gidText(ep.GIDIndex), ep.DeviceFrom)
	}
	if err := b.resolveRails(ctx, &ep, pod); err != nil {
		return ep, err
	}
	ep.Affinity = b.disc.Affinity(ctx, ep)
	b.warnAffinity(ep)
	return ep, nil
}

// createPods creates the pods, CreateParallelism at a time; the first
// failure stops the creations not yet started and is returned (the
// caller's Cleanup removes the pods that exist, by label).
func (b *Backend) createPods(ctx context.Context, eps []endpoint.Endpoint, pods []*corev1.Pod, owner *metav1.OwnerReference) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, b.opts.CreateParallelism)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, ep := range eps {
		select {
		case slots <- struct{}{}:
		case <-cctx.Done():
		}
		if cctx.Err() != nil {
			break
		}
		pod := pods[i]
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
		b.mu.Lock()
		b.pods[ep.Name] = podInfo{name: pod.Name}
		b.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			pods := b.client.CoreV1().Pods(b.namespace)
			err := b.retryCreate(cctx, func() error {
				_, err := pods.Create(cctx, pod, metav1.CreateOptions{})
				return err
			}, func() (metav1.Object, error) { return pods.Get(cctx, pod.Name, metav1.GetOptions{}) })
			if err != nil {
				once.Do(func() { first = createError(pod.Name, err); cancel() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// place fills an endpoint from its ready pod: node, pod, data address;
// and returns what the data network's CNI says of the device behind it
// (network-status device-info).
func (b *Backend) place(ctx context.Context, ep *endpoint.Endpoint, pod *corev1.Pod) (remote.DeviceHints, error) {
	ep.Node, ep.Pod = pod.Spec.NodeName, pod.Name
	b.mu.Lock()
	b.pods[ep.Name] = podInfo{name: pod.Name, node: pod.Spec.NodeName}
	b.mu.Unlock()
	nets := placementOf(*ep).Networks
	if len(nets) == 0 {
		if pod.Status.PodIP == "" {
			return remote.DeviceHints{}, &StartupError{Pod: pod.Name, Reason: "NoAddress", Msg: "the pod is Ready but has no IP"}
		}
		ep.Address, ep.Network = pod.Status.PodIP, "pod network"
		if b.sc.Cluster.HostNetwork {
			ep.Network = "host network"
		}
		if att, ok := b.draAttachment(ctx, pod); ok {
			ep.Address, ep.Network, ep.Interface = att.IP, att.Network, att.Interface
		}
		return remote.DeviceHints{}, nil
	}
	att, err := b.dataAttachment(pod, nets[0])
	if err != nil {
		return remote.DeviceHints{}, &StartupError{Pod: pod.Name, Reason: "NoSecondaryNetwork", Msg: err.Error()}
	}
	ep.Address, ep.Network, ep.Interface = att.IP, att.Network, att.Interface
	return att.hints(), nil
}

// hints are what the network's CNI says of the device behind it
// (network-status device-info); none when it says nothing.
func (att attachment) hints() remote.DeviceHints {
	var hints remote.DeviceHints
	if att.RDMADevice != "" || att.PCIAddress != "" {
		hints.From = "network-status device-info of " + att.Network
		hints.RDMADevice = att.RDMADevice
		if att.RDMADevice == "" {
			hints.PCIAddresses = []string{att.PCIAddress}
		}
	}
	return hints
}

// hintsScript prints the SR-IOV device plugin's PCIDEVICE_<RESOURCE>
// variables (the PCI functions it allocated) and, as given=DEV, each RDMA
// device whose verbs character device the pod was given (/dev/infiniband:
// what an RDMA or EFA device plugin mounts).
const hintsScript = `env | grep '^PCIDEVICE_' || true
for u in /sys/class/infiniband_verbs/uverbs*; do [ -e "/dev/infiniband/${u##*/}" ] && [ -r "$u/ibdev" ] && echo "given=$(cat "$u/ibdev")"; done
true`

// deviceHints says which RDMA device the pod was given, for a network
// whose CNI reported no device-info: the SR-IOV device plugin's
// PCIDEVICE_ variables; on EKS the EFA devices the EFA plugin gave it
// (EFA devices carry no address a GID would name); elsewhere the one
// device the pod was given, when it was given one.
func (b *Backend) deviceHints(ctx context.Context, ep endpoint.Endpoint) remote.DeviceHints {
	ectx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := b.Exec(ectx, ep, []string{"sh", "-c", hintsScript})
	if err != nil {
		return remote.DeviceHints{}
	}
	return parseHints(string(out), b.plat)
}

// parseHints reads hintsScript's output.
func parseHints(out, platform string) remote.DeviceHints {
	var h remote.DeviceHints
	var names, given []string
	for _, line := range strings.Split(out, "\n") {
		name, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case !ok:
		case name == "given":
			if !slices.Contains(given, val) {
				given = append(given, val)
			}
		case strings.HasPrefix(name, "PCIDEVICE_") && !strings.HasSuffix(name, "_INFO"):
			names = append(names, name)
			for _, a := range strings.Split(val, ",") {
				if a = strings.TrimSpace(a); a != "" {
					h.PCIAddresses = append(h.PCIAddresses, a)
				}
			}
		}
	}
	switch {
	case len(h.PCIAddresses) > 0:
		sort.Strings(names)
		h.From = strings.Join(names, ", ")
	case platform == PlatformEKS && len(given) > 0:
		h.RDMADevice = given[0]
		h.From = fmt.Sprintf("the EFA devices given to the pod (%s)", strings.Join(given, ", "))
	case len(given) == 1:
		h.RDMADevice = given[0]
		h.From = "the one RDMA device given to the pod (/dev/infiniband)"
	}
	return h
}

func gidText(g *int) string {
	if g == nil {
		return ""
	}
	return fmt.Sprintf(" GID %d", *g)
}

// ensureNamespace creates the namespace when it does not exist, labelled
// as the run's, so that only a namespace rdmabench created is deleted, and
// with the PodSecurity level its pods need (level). An existing
// namespace is used as it is: the admission dry run says whether its
// level lets the pods in.
func (b *Backend) ensureNamespace(ctx context.Context, level string) error {
	ns, err := b.client.CoreV1().Namespaces().Get(ctx, b.namespace, metav1.GetOptions{})
	if err == nil && ns.DeletionTimestamp != nil {
		// An earlier run's namespace still terminating: nothing can be
		// created in it, so wait until it is gone and make it anew.
		b.progressf("namespace %s is being deleted (an earlier run's); waiting for it to go", b.namespace)
		if err = b.waitNamespaceGone(ctx); err != nil {
			return err
		}
		_, err = b.client.CoreV1().Namespaces().Get(ctx, b.namespace, metav1.GetOptions{})
	}
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		if apierrors.IsForbidden(err) {
			// May not read namespaces: assume it exists; pod creation says if not.
			return nil
		}
		return fmt.Errorf("kube: reading namespace %s: %w", b.namespace, err)
	}
	ns = b.namespaceObject(level)
	// Marked before the create: a create that fails on the way back (Ctrl-C,
	// a timeout) may have made it, and Cleanup deletes only a namespace
	// labelled as this run's.
	b.mu.Lock()
	b.createdNS = true
	b.mu.Unlock()
	_, err = b.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if refusedCreate(err) { // nothing made: nothing for Cleanup to look for
		b.mu.Lock()
		b.createdNS = false
		b.mu.Unlock()
	}
	if apierrors.IsAlreadyExists(err) {
		return nil // made by someone else meanwhile: theirs, not the run's
	}
	if err != nil {
		return fmt.Errorf("kube: creating namespace %s: %w (create it beforehand, or grant create on namespaces)", b.namespace, err)
	}
	b.progressf("created namespace %s with PodSecurity level %s (removed at the end of the run)", b.namespace, level)
	return nil
}

// ensureOwner makes the run's ConfigMap once, which owns every pod and
// service: deleting it (or the namespace) lets the garbage collector
// remove the rest, even after a crash that skipped the clean-up.
func (b *Backend) ensureOwner(ctx context.Context) (*metav1.OwnerReference, error) {
	b.mu.Lock()
	owner := b.owner
	b.mu.Unlock()
	if owner != nil {
		return owner, nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: b.ownerName(), Namespace: b.namespace, Labels: b.runLabels()},
		Data:       map[string]string{"scenario": b.sc.Metadata.Name, "run": b.opts.RunID},
	}
	// Marked before the create, as the pods are: one that fails on the
	// way back (Ctrl-C, a timeout) may have made it, and Cleanup then
	// looks for it by the run's label.
	b.mu.Lock()
	b.ownerCreated = true
	b.mu.Unlock()
	got, err := b.client.CoreV1().ConfigMaps(b.namespace).Create(ctx, cm, metav1.CreateOptions{})
	if refusedCreate(err) {
		b.mu.Lock()
		b.ownerCreated = false
		b.mu.Unlock()
	}
	if err != nil {
		se := createError(cm.Name, err)
		se.Kind = "configmap"
		return nil, se
	}
	owner = &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: got.Name, UID: got.UID}
	b.mu.Lock()
	b.owner = owner
	b.mu.Unlock()
	return owner, nil
}

// refusedCreate says whether the API answered a create with a definite
// no (RBAC, admission, validation, a name taken, throttled): nothing was
// made. A timeout, a lost connection or an ended context may have made it.
func refusedCreate(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsAlreadyExists(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsMethodNotSupported(err)
}

// createError turns a refused create (quota, admission, RBAC) into a
// startup error with the API's own message.
func createError(name string, err error) *StartupError {
	reason := "CreateFailed"
	switch {
	case apierrors.IsForbidden(err):
		reason = "Forbidden"
	case apierrors.IsInvalid(err):
		reason = "Invalid"
	case apierrors.IsAlreadyExists(err):
		reason = "AlreadyExists"
	}
	return &StartupError{Pod: name, Reason: reason, Msg: err.Error()}
}

// waitNamespaceGone waits, bounded, until a terminating namespace is gone.
func (b *Backend) waitNamespaceGone(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.DeleteTimeout)
	defer cancel()
	for {
		_, err := b.client.CoreV1().Namespaces().Get(ctx, b.namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube: namespace %s is still terminating after %s: wait for it, or use another namespace (-n)", b.namespace, b.opts.DeleteTimeout)
		case <-time.After(b.opts.PollInterval):
		}
	}
}

// namespaceObject is the namespace a run creates: the run's labels, the
// created-by mark (only such a namespace is ever deleted) and the
// PodSecurity labels of level.
func (b *Backend) namespaceObject(level string) *corev1.Namespace {
	labels := b.runLabels()
	labels[LabelCreatedBy] = managedBy
	maps.Copy(labels, podSecurityLabels(level))
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.namespace, Labels: labels}}
}
