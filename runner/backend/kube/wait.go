package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// waitReady polls the run's pods until all n are Ready, printing progress,
// and fails at the first pod that cannot start. It returns the pods by name.
// Only pods still not Ready are judged, each on what concerns its current
// attempt (podEvents.current): a warning a pod outlived is noise.
func (b *Backend) waitReady(ctx context.Context, n int) (map[string]*corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelRun: b.opts.RunID}).String()
	firstSeen := map[string]time.Time{} // pod/reason → when the problem was first seen
	lastReady := -1
	pods := map[string]*corev1.Pod{}
	tick := time.NewTicker(b.opts.PollInterval)
	defer tick.Stop()
	for {
		list, err := b.client.CoreV1().Pods(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			if ctx.Err() != nil {
				return pods, ctx.Err()
			}
			b.progressf("listing pods: %v (retrying)", err)
		} else {
			pods = map[string]*corev1.Pod{}
			ready := 0
			var waiting []*corev1.Pod
			for i := range list.Items {
				p := &list.Items[i]
				pods[p.Name] = p
				if podReady(p) {
					ready++
				} else {
					waiting = append(waiting, p)
				}
			}
			if ready != lastReady {
				b.progressf("%d/%d pods ready", ready, n)
				lastReady = ready
			}
			if ready >= n && len(list.Items) >= n {
				return pods, nil
			}
			evs := b.runEvents(ctx)
			for _, p := range waiting {
				if err := b.podProblem(ctx, p, firstSeen, evs); err != nil {
					return pods, err
				}
			}
		}
		select {
		case <-ctx.Done():
			return pods, ctx.Err()
		case <-tick.C:
		}
	}
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
	for _, cs := range p.Status.ContainerStatuses {
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
		if lingeringEvents[e.Reason] && evs.current(e, p) && b.lingered(firstSeen, p.Name+"/"+e.Reason) {
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
		return " (more pods than nodes to spread them over: lower replicas, or change cluster.antiAffinity)"
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
func (b *Backend) timeoutError(ctx context.Context, timeout time.Duration, pods map[string]*corev1.Pod) error {
	var waiting []string
	for name, p := range pods {
		if !podReady(p) {
			waiting = append(waiting, name+" ("+podState(p)+")")
		}
	}
	sort.Strings(waiting)
	return &StartupError{Pod: strings.Join(waiting, ", "), Reason: "StartupTimeout",
		Msg: fmt.Sprintf("not ready after cluster.startupTimeout %s (raise it, or look at kubectl describe pod -n %s)", timeout, b.namespace)}
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
