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
// starting); they fail the run once they persist for UnschedulableGrace.
var lingeringEvents = map[string]bool{"FailedCreatePodSandBox": true, "FailedMount": true, "FailedAttachVolume": true}

// waitReady polls the run's pods until all n are Ready, printing progress,
// and fails at the first pod that cannot start. It returns the pods by name.
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
			for i := range list.Items {
				p := &list.Items[i]
				pods[p.Name] = p
				if podReady(p) {
					ready++
					continue
				}
				if err := b.podProblem(ctx, p, firstSeen); err != nil {
					return pods, err
				}
			}
			if ready != lastReady {
				b.progressf("%d/%d pods ready", ready, n)
				lastReady = ready
			}
			if ready >= n && len(list.Items) >= n {
				return pods, nil
			}
			if err := b.eventProblem(ctx, firstSeen); err != nil {
				return pods, err
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
func (b *Backend) podProblem(ctx context.Context, p *corev1.Pod, firstSeen map[string]time.Time) error {
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		msg := fmt.Sprintf("the pod ended (phase %s): %s", p.Status.Phase, terminatedText(p))
		return &StartupError{Pod: p.Name, Reason: "PodEnded", Msg: b.withLogs(ctx, p, msg, false)}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			if b.lingered(firstSeen, p.Name+"/unschedulable") {
				return &StartupError{Pod: p.Name, Reason: "FailedScheduling", Msg: c.Message + hintFor(c.Message)}
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
	return nil
}

// eventProblem reads the warnings about the run's pods: a sandbox that
// cannot be created (a Multus network that does not exist) or a volume
// that cannot be mounted, once they persist.
func (b *Backend) eventProblem(ctx context.Context, firstSeen map[string]time.Time) error {
	evs, err := b.client.CoreV1().Events(b.namespace).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		return nil // events are a help, not a requirement (RBAC may hide them)
	}
	prefix := "rdmabench-" + b.opts.RunID + "-"
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind != "Pod" || !strings.HasPrefix(e.InvolvedObject.Name, prefix) || !lingeringEvents[e.Reason] {
			continue
		}
		if b.lingered(firstSeen, e.InvolvedObject.Name+"/"+e.Reason) {
			return &StartupError{Pod: e.InvolvedObject.Name, Reason: e.Reason, Msg: e.Message}
		}
	}
	return nil
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
