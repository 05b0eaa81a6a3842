package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// fatalWaiting are container waiting reasons that will not resolve by
// themselves: the run gives up at once with the kubelet's message.
var fatalWaiting = map[string]bool{
	"ImagePullBackOff": true, "ErrImagePull": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CrashLoopBackOff": true, "CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// lingeringEvents are warnings that may be transient (a CNI still
// starting); they fail the run once they persist for the fail-fast window
// on a pod still not Ready.
var lingeringEvents = map[string]bool{"FailedCreatePodSandBox": true, "FailedMount": true, "FailedAttachVolume": true}

// Events that say a node is coming for an unschedulable pod: the cluster
// autoscaler's TriggeredScaleUp, Karpenter's Nominated. Such a pod waits
// until startupTimeout instead of failing fast. NotTriggerScaleUp is the
// autoscaler saying it cannot help; its words join the scheduler's.
const (
	eventTriggeredScaleUp = "TriggeredScaleUp"
	eventNominated        = "Nominated"
	eventNotScaleUp       = "NotTriggerScaleUp"
)

// waitReady waits until all n of the run's pods are Ready, printing
// progress, and fails at the first pod that cannot start. It returns the
// pods by name. The pods and their events are watched (informers: one
// LIST each, then a watch, resynced), so the wait costs the API a few
// requests however long it lasts and many pods there are; where the
// pods cannot be watched (a watch refused, an API that does not serve
// it) it polls a LIST instead. Only pods still not Ready are judged, each
// on what concerns its current attempt (podEvents.current): a warning a
// pod outlived is noise.
//
// names are the pods created: one seen and then gone (deleted, evicted)
// fails the wait at once.
func (b *Backend) waitReady(ctx context.Context, names []string) (map[string]*corev1.Pod, error) {
	j := &readyJudge{b: b, n: len(names), names: names, firstSeen: map[string]time.Time{}, lastReady: -1,
		seen: map[string]bool{}, asked: map[string]time.Time{}}
	w := b.watchRun(ctx)
	defer w.stop()
	tick := time.NewTicker(b.opts.PollInterval)
	defer tick.Stop()
	pods := map[string]*corev1.Pod{}
	for {
		if w.pods.HasSynced() {
			var done bool
			var err error
			pods, done, err = j.judge(ctx, w.runPods(b.opts.RunID), w.runEvents(b.opts.RunID))
			if done || err != nil {
				return pods, err
			}
		} else if err := w.podErr(); err != nil && !canRetryWatch(err) {
			b.progressf("watching the run's pods: %v; polling them instead", err)
			return b.pollReady(ctx, j)
		}
		select {
		case <-ctx.Done():
			if err := w.podErr(); err != nil && !w.pods.HasSynced() {
				return pods, &unlistedError{err: err, cause: ctx.Err()}
			}
			return pods, ctx.Err()
		case <-w.changed:
		case <-tick.C: // the fail-fast window's clock
		}
	}
}

// unlistedError is a wait that ended (cause) while the run's pods could
// not be listed (err): the pods' informer never synced.
type unlistedError struct{ err, cause error }

func (e *unlistedError) Error() string {
	return e.cause.Error() + " (the run's pods could not be listed: " + e.err.Error() + ")"
}

func (e *unlistedError) Unwrap() error { return e.cause }

// canRetryWatch says whether a watch's error is one its reflector gets
// past (the API restarting, a watch that expired); not a refusal.
func canRetryWatch(err error) bool {
	return !apierrors.IsForbidden(err) && !apierrors.IsMethodNotSupported(err) && !apierrors.IsNotFound(err) && !apierrors.IsUnauthorized(err)
}

// pollReady is waitReady by polling: the run's pods and their events
// listed every PollInterval.
func (b *Backend) pollReady(ctx context.Context, j *readyJudge) (map[string]*corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelRun: b.opts.RunID}).String()
	pods := map[string]*corev1.Pod{}
	tick := time.NewTicker(b.opts.PollInterval)
	defer tick.Stop()
	var listErr error // the last list's error, until one succeeds
	ended := func() error {
		if listErr != nil {
			return &unlistedError{err: listErr, cause: ctx.Err()}
		}
		return ctx.Err()
	}
	for {
		list, err := b.client.CoreV1().Pods(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			if ctx.Err() != nil {
				return pods, ended()
			}
			listErr = err
			b.progressf("listing pods: %v (retrying)", err)
		} else {
			listErr = nil
			items := make([]*corev1.Pod, len(list.Items))
			for i := range list.Items {
				items[i] = &list.Items[i]
			}
			var done bool
			pods, done, err = j.judge(ctx, items, b.runEvents(ctx))
			if done || err != nil {
				return pods, err
			}
		}
		select {
		case <-ctx.Done():
			return pods, ended()
		case <-tick.C:
		}
	}
}

// readyJudge is the state of one wait for Ready.
type readyJudge struct {
	b         *Backend
	n         int
	firstSeen map[string]time.Time // pod/reason → when the problem was first seen
	lastReady int
	names     []string             // the pods created
	seen      map[string]bool      // the pods seen so far
	asked     map[string]time.Time // a pod never seen: when the API was last asked for it
}

// judge looks at the pods as they are now: done when all n are Ready,
// an error at the first that cannot start.
func (j *readyJudge) judge(ctx context.Context, list []*corev1.Pod, evs podEvents) (map[string]*corev1.Pod, bool, error) {
	pods := make(map[string]*corev1.Pod, len(list))
	ready := 0
	var waiting []*corev1.Pod
	for _, p := range list {
		pods[p.Name] = p
		j.seen[p.Name] = true
		if podReady(p) {
			ready++
		} else {
			waiting = append(waiting, p)
		}
	}
	if ready != j.lastReady {
		j.b.progressf("%d/%d pods ready", ready, j.n)
		j.lastReady = ready
	}
	if ready >= j.n && len(list) >= j.n {
		return pods, true, nil
	}
	// A pod seen and gone: deleted or evicted; it will not come back (a
	// GET confirms: a cache is never the last word).
	var gone []string
	for name := range j.seen {
		if pods[name] == nil {
			if _, err := j.b.client.CoreV1().Pods(j.b.namespace).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				gone = append(gone, name)
			}
		}
	}
	// A pod never seen: the list may lag its create (a watch cache), or
	// it went before the list. A GET (a consistent read) tells, once and
	// then once per fail-fast window.
	for _, name := range j.names {
		if j.seen[name] || pods[name] != nil {
			continue
		}
		if at, ok := j.asked[name]; ok && time.Since(at) < j.b.opts.UnschedulableGrace {
			continue
		}
		j.asked[name] = time.Now()
		_, err := j.b.client.CoreV1().Pods(j.b.namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		return pods, false, &StartupError{Pod: strings.Join(gone, ", "), Reason: "NotFound",
			Msg: "the pod disappeared while the run waited for it (deleted by someone, or evicted)"}
	}
	sort.Slice(waiting, func(a, c int) bool { return waiting[a].Name < waiting[c].Name })
	for _, p := range waiting {
		if err := j.b.podProblem(ctx, p, j.firstSeen, evs); err != nil {
			return pods, false, err
		}
	}
	return pods, false, nil
}

// runWatch is the informers of one wait: the run's pods (by label) and
// the namespace's pod events, each listed once and then watched.
type runWatch struct {
	pods, events cache.SharedIndexInformer
	changed      chan struct{} // poked on every change (coalesced)
	cancel       context.CancelFunc
	mu           sync.Mutex
	err          error // the pods' list or watch's last error
}

// watchResync re-delivers the caches now and then (no request).
const watchResync = 30 * time.Second

func (b *Backend) watchRun(ctx context.Context) *runWatch {
	wctx, cancel := context.WithCancel(ctx)
	sel := labels.SelectorFromSet(labels.Set{LabelRun: b.opts.RunID}).String()
	w := &runWatch{changed: make(chan struct{}, 1), cancel: cancel}
	w.pods = coreinformers.NewFilteredPodInformer(b.client, b.namespace, watchResync, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = sel })
	w.events = coreinformers.NewFilteredEventInformer(b.client, b.namespace, watchResync, cache.Indexers{},
		func(o *metav1.ListOptions) { o.FieldSelector = "involvedObject.kind=Pod" })
	poke := func(any) {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke}
	_, _ = w.pods.AddEventHandler(h)
	_, _ = w.events.AddEventHandler(h)
	// Errors are the wait's to judge, not klog's to print; events are a
	// help (RBAC may hide them), so theirs are dropped.
	_ = w.pods.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		poke(nil)
	})
	_ = w.events.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) {})
	go w.pods.RunWithContext(wctx)
	go w.events.RunWithContext(wctx)
	return w
}

func (w *runWatch) stop() { w.cancel() }

func (w *runWatch) podErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// runPods are the run's pods in the cache (filtered again: a watch need
// not honour the selector).
func (w *runWatch) runPods(runID string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range w.pods.GetStore().List() {
		if p, ok := o.(*corev1.Pod); ok && p.Labels[LabelRun] == runID {
			out = append(out, p)
		}
	}
	return out
}

// runEvents are the cached events about the run's pods, by pod name.
func (w *runWatch) runEvents(runID string) podEvents {
	prefix := "rdmabench-" + runID + "-"
	evs := podEvents{}
	for _, o := range w.events.GetStore().List() {
		if e, ok := o.(*corev1.Event); ok && e.InvolvedObject.Kind == "Pod" && strings.HasPrefix(e.InvolvedObject.Name, prefix) {
			evs[e.InvolvedObject.Name] = append(evs[e.InvolvedObject.Name], *e)
		}
	}
	return evs
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podProblem is the reason a pod will not become Ready, if it has one
// that the run should not wait out.
func (b *Backend) podProblem(ctx context.Context, p *corev1.Pod, firstSeen map[string]time.Time, evs podEvents) error {
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		msg := fmt.Sprintf("the pod ended (phase %s): %s", p.Status.Phase, terminatedText(p))
		return &StartupError{Pod: p.Name, Reason: "PodEnded", Msg: b.withLogs(ctx, p, msg, false)}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			if why := evs.scaleUp(p); why != "" {
				// A node is coming: wait until startupTimeout.
				if _, told := firstSeen[p.Name+"/scale-up"]; !told {
					firstSeen[p.Name+"/scale-up"] = time.Now()
					b.progressf("pod %s is unschedulable, but %s: waiting up to cluster.startupTimeout", p.Name, why)
				}
				continue
			}
			if b.lingered(firstSeen, p.Name+"/unschedulable") {
				msg := c.Message
				if no := evs.latest(p, eventNotScaleUp); no != nil {
					msg += "; the cluster autoscaler: " + no.Message
				}
				return &StartupError{Pod: p.Name, Reason: "FailedScheduling", Msg: msg + hintFor(c.Message)}
			}
		}
	}
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		w := cs.State.Waiting
		if w == nil || !fatalWaiting[w.Reason] {
			continue
		}
		msg := w.Message
		if msg == "" {
			msg = "image " + cs.Image
		}
		if strings.Contains(w.Reason, "Image") && !strings.Contains(msg, cs.Image) {
			msg = "image " + cs.Image + ": " + msg
		}
		if w.Reason == "CrashLoopBackOff" {
			msg = b.withLogs(ctx, p, fmt.Sprintf("the container exits (restarted %d times; %s)", cs.RestartCount, lastTermination(cs)), true)
		}
		return &StartupError{Pod: p.Name, Reason: w.Reason, Msg: msg}
	}
	// A sandbox that cannot be created (a Multus network that does not
	// exist), a volume that cannot be mounted: once it persists.
	for _, e := range evs[p.Name] {
		if lingeringEvents[e.Reason] && evs.current(e, p) && !evs.gotPast(e, p) && b.lingered(firstSeen, p.Name+"/"+e.Reason) {
			return &StartupError{Pod: p.Name, Reason: e.Reason, Msg: e.Message}
		}
	}
	return nil
}

// podEvents are the events about the run's pods, by pod name.
type podEvents map[string][]corev1.Event

// runEvents reads the events of the run's pods (one list per poll);
// events are a help, not a requirement: RBAC may hide them.
func (b *Backend) runEvents(ctx context.Context) podEvents {
	list, err := b.client.CoreV1().Events(b.namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod"})
	if err != nil {
		return nil
	}
	prefix := "rdmabench-" + b.opts.RunID + "-"
	evs := podEvents{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Pod" && strings.HasPrefix(e.InvolvedObject.Name, prefix) {
			evs[e.InvolvedObject.Name] = append(evs[e.InvolvedObject.Name], e)
		}
	}
	return evs
}

// current reports whether an event concerns the pod's current attempt:
// this pod (not an earlier one of the same name), seen last since it was
// created, and not before its sandbox was last made ready (a sandbox
// failure the pod got past is history).
func (podEvents) current(e corev1.Event, p *corev1.Pod) bool {
	if e.InvolvedObject.UID != "" && e.InvolvedObject.UID != p.UID {
		return false
	}
	t := eventTime(e)
	if t.Before(p.CreationTimestamp.Time) {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(t) {
			return false
		}
	}
	return true
}

// sandboxProgress are the kubelet's events of a pod whose volumes are
// mounted and whose sandbox (network included) was made: the image pull
// and the container's start.
var sandboxProgress = map[string]bool{"Pulling": true, "Pulled": true, "Created": true, "Started": true}

// gotPast reports whether the pod got past a sandbox or mount failure e:
// the kubelet reported progress of the same pod since. This is what tells
// it where the PodReadyToStartContainers condition does not (Kubernetes
// before 1.29, OpenShift before 4.16): a CNI not yet ready on a new node
// fails one sandbox, and the pull of a large image that follows must not
// be judged by that failure.
func (evs podEvents) gotPast(e corev1.Event, p *corev1.Pod) bool {
	t := eventTime(e)
	for _, o := range evs[p.Name] {
		if sandboxProgress[o.Reason] && evs.current(o, p) && !eventTime(o).Before(t) {
			return true
		}
	}
	return false
}

// latest is the pod's most recent current event with reason, or nil.
func (evs podEvents) latest(p *corev1.Pod, reason string) *corev1.Event {
	var best *corev1.Event
	for i, e := range evs[p.Name] {
		if e.Reason == reason && evs.current(e, p) && (best == nil || eventTime(e).After(eventTime(*best))) {
			best = &evs[p.Name][i]
		}
	}
	return best
}

// scaleUp says why an unschedulable pod will get a node: a node nominated
// for it (preemption, Karpenter), or the autoscaler adding one; "" when
// nothing says so.
func (evs podEvents) scaleUp(p *corev1.Pod) string {
	if n := p.Status.NominatedNodeName; n != "" {
		return "node " + n + " is nominated for it"
	}
	if e := evs.latest(p, eventTriggeredScaleUp); e != nil {
		return "the cluster autoscaler is adding a node (" + e.Reason + ": " + e.Message + ")"
	}
	if e := evs.latest(p, eventNominated); e != nil {
		return "a node is being made for it (" + e.Reason + ": " + e.Message + ")"
	}
	return ""
}

// eventTime is when an event was last seen, whichever field its source
// filled.
func eventTime(e corev1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.FirstTimestamp.Time, e.LastTimestamp.Time, e.EventTime.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}

// lingered records when a problem was first seen and reports whether it
// has lasted UnschedulableGrace.
func (b *Backend) lingered(firstSeen map[string]time.Time, key string) bool {
	t, ok := firstSeen[key]
	if !ok {
		firstSeen[key] = time.Now()
		return b.opts.UnschedulableGrace <= 0
	}
	return time.Since(t) >= b.opts.UnschedulableGrace
}

// hintFor adds what to do about common scheduler refusals.
func hintFor(msg string) string {
	switch {
	case strings.Contains(msg, "anti-affinity"):
		return " (more pods than nodes to spread them over: lower replicas, put several of a pool's on a node with pools[].perNode, or change cluster.antiAffinity)"
	case strings.Contains(msg, "pod affinity"):
		return " (the pods of a pool's node group (pools[].perNode) must share one node, and no node takes them all: lower perNode, or check what each pod requests)"
	case strings.Contains(msg, "Insufficient"):
		return " (the nodes lack the resources asked for: check cluster.resources, pool gpus and the device plugins)"
	case strings.Contains(msg, "untolerated taint"):
		return " (add cluster.tolerations for the nodes' taints)"
	case strings.Contains(msg, "node affinity/selector"):
		return " (no node has the labels of nodeSelector)"
	}
	return ""
}

// timeoutError says which pods were not ready when startupTimeout passed,
// and what each was waiting for.
// names are the pods created; waitErr is the wait's error (it may say the
// pods could not be listed).
func (b *Backend) timeoutError(timeout time.Duration, names []string, pods map[string]*corev1.Pod, waitErr error) error {
	var waiting []string
	for _, name := range names {
		switch p := pods[name]; {
		case p == nil:
			waiting = append(waiting, name+" (not seen)")
		case !podReady(p):
			waiting = append(waiting, name+" ("+podState(p)+")")
		}
	}
	sort.Strings(waiting)
	msg := fmt.Sprintf("not ready after cluster.startupTimeout %s (raise it, or look at kubectl describe pod -n %s)", timeout, b.namespace)
	var unlisted *unlistedError
	if errors.As(waitErr, &unlisted) {
		msg += "; the run's pods could not be listed: " + unlisted.err.Error()
	}
	return &StartupError{Pod: strings.Join(waiting, ", "), Reason: "StartupTimeout", Msg: msg}
}

// podState is a short account of why a pod is not ready.
func podState(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status == corev1.ConditionFalse && c.Reason != "" {
			return string(c.Type) + "=" + c.Reason
		}
	}
	return string(p.Status.Phase)
}

func terminatedText(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("container %s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason)
		}
	}
	return p.Status.Reason + " " + p.Status.Message
}

func lastTermination(cs corev1.ContainerStatus) string {
	if t := cs.LastTerminationState.Terminated; t != nil {
		return fmt.Sprintf("last exit code %d, %s", t.ExitCode, t.Reason)
	}
	return "no exit recorded yet"
}

// withLogs appends the container's last log lines (of the previous
// instance for a crash loop) to msg.
func (b *Backend) withLogs(ctx context.Context, p *corev1.Pod, msg string, previous bool) string {
	tail := int64(10)
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	raw, err := b.client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, Previous: previous, TailLines: &tail}).DoRaw(lctx)
	if err != nil || len(strings.TrimSpace(string(raw))) == 0 {
		return msg
	}
	return msg + "; last log lines:\n" + strings.TrimRight(string(raw), "\n")
}
