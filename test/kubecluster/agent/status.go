package agent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// snapshot is the pod with the status a kubelet would report now. Readiness
// probes are not run: a container is ready while its process runs.
func (p *pod) snapshot() *corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.spec.DeepCopy()
	st := &out.Status
	st.HostIP = p.agent.hostIP()
	st.HostIPs = []corev1.HostIP{{IP: p.agent.hostIP()}}
	st.StartTime = &p.started
	if p.net != nil && len(p.net.Attachments) > 0 {
		ip := p.net.Attachments[0].IP.String()
		st.PodIP = ip
		st.PodIPs = []corev1.PodIP{{IP: ip}}
	} else if p.net != nil { // hostNetwork
		st.PodIP = p.agent.hostIP()
		st.PodIPs = []corev1.PodIP{{IP: p.agent.hostIP()}}
	}
	allRunning, anyRunning, restarting, pending := true, false, false, false
	allTerminated, allSucceeded := true, true
	initialized := true
	st.InitContainerStatuses = nil
	for _, c := range p.inits {
		st.InitContainerStatuses = append(st.InitContainerStatuses, c.status())
		if c.state.Terminated == nil || c.state.Terminated.ExitCode != 0 {
			initialized = false
		}
	}
	st.ContainerStatuses = nil
	for _, c := range p.containers {
		st.ContainerStatuses = append(st.ContainerStatuses, c.status())
		switch {
		case c.state.Running != nil:
			anyRunning = true
		case c.state.Waiting != nil && c.state.Waiting.Reason == "CrashLoopBackOff":
			restarting = true
		case c.state.Waiting != nil:
			pending = true
		}
		if c.state.Running == nil {
			allRunning = false
		}
		if c.state.Terminated == nil {
			allTerminated = false
		} else if c.state.Terminated.ExitCode != 0 {
			allSucceeded = false
		}
	}
	switch {
	case p.netErr != "":
		st.Phase, st.Reason, st.Message = corev1.PodPending, "NetworkNotReady", p.netErr
	case p.initFailed:
		st.Phase = corev1.PodFailed
	case !initialized:
		st.Phase = corev1.PodPending
	case allTerminated && len(p.containers) > 0:
		st.Phase = corev1.PodFailed
		if allSucceeded {
			st.Phase = corev1.PodSucceeded
		}
	case anyRunning || restarting:
		st.Phase = corev1.PodRunning
	case pending:
		st.Phase = corev1.PodPending
	default:
		st.Phase = corev1.PodRunning
	}
	ready := allRunning && len(p.containers) > 0 && !p.gone
	st.Conditions = []corev1.PodCondition{
		condition(corev1.PodScheduled, true, ""),
		condition(corev1.PodReadyToStartContainers, p.net != nil, ""),
		condition(corev1.PodInitialized, initialized, "ContainersNotInitialized"),
		condition(corev1.ContainersReady, ready, "ContainersNotReady"),
		condition(corev1.PodReady, ready, "ContainersNotReady"),
	}
	return out
}

func condition(t corev1.PodConditionType, ok bool, reason string) corev1.PodCondition {
	c := corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}
	if !ok {
		c.Status, c.Reason = corev1.ConditionFalse, reason
	}
	return c
}

// status is the container's status as a kubelet reports it.
func (c *container) status() corev1.ContainerStatus {
	started := c.state.Running != nil
	cs := corev1.ContainerStatus{
		Name: c.spec.Name, Image: c.spec.Image, ImageID: "rdmabench-kubecluster://" + c.spec.Image,
		State: *c.state.DeepCopy(), LastTerminationState: *c.last.DeepCopy(),
		RestartCount: c.restarts, Ready: started, Started: &started,
	}
	if c.pid > 0 {
		cs.ContainerID = fmt.Sprintf("proc://%d", c.pid)
	}
	return cs
}
