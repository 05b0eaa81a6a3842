package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rdmabench/rdmabench/scenarios"
)

// Platforms the backend tells apart (cluster.platform overrides what it
// detects).
const (
	PlatformKubernetes = scenarios.PlatformKubernetes
	PlatformOpenShift  = scenarios.PlatformOpenShift
	PlatformGKE        = scenarios.PlatformGKE
	PlatformEKS        = scenarios.PlatformEKS
)

// gkeNetworkGroup is GKE's multi-network API (Network,
// GKENetworkParamSet); GKE's and EKS's own builds say so in their version
// ("v1.33.5-gke.1162000", "v1.33.5-eks-113cf36").
const gkeNetworkGroup = "networking.gke.io"

// openShiftSecurityGroup is the API group only OpenShift serves: its
// SecurityContextConstraints decide which pods a ServiceAccount may run.
const openShiftSecurityGroup = "security.openshift.io"

// The PodSecurity admission labels of a namespace, and what rdmabench
// needs of them: privileged when a pod adds a capability beyond
// baseline's (IPC_LOCK is), runs privileged or on the host's network.
const (
	PodSecurityEnforce = "pod-security.kubernetes.io/enforce"
	PodSecurityWarn    = "pod-security.kubernetes.io/warn"
	PodSecurityAudit   = "pod-security.kubernetes.io/audit"
	levelBaseline      = "baseline"
	levelPrivileged    = "privileged"
)

// SCCName is the SecurityContextConstraints deploy/openshift ships, and
// SCCRole the ClusterRole granting `use` of it (OpenShift's own naming for
// such roles).
const (
	SCCName = "rdmabench"
	SCCRole = "system:openshift:scc:" + SCCName
)

// baselineCapabilities are the capabilities PodSecurity "baseline" lets a
// container add (the Pod Security Standards); any other needs "privileged".
var baselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// DetectPlatform tells the platforms apart through discovery, which every
// authenticated user may read: OpenShift serves security.openshift.io,
// GKE networking.gke.io (or says -gke. in its version), EKS says -eks-.
func DetectPlatform(ctx context.Context, client kubernetes.Interface) (string, error) {
	var groups *metav1.APIGroupList
	err := retry(ctx, func() (err error) {
		groups, err = client.Discovery().ServerGroups()
		return err
	})
	if err != nil {
		return "", fmt.Errorf("kube: discovering the cluster's APIs: %w", err)
	}
	for _, g := range groups.Groups {
		switch g.Name {
		case openShiftSecurityGroup:
			return PlatformOpenShift, nil
		case gkeNetworkGroup:
			return PlatformGKE, nil
		}
	}
	if v, err := client.Discovery().ServerVersion(); err == nil {
		switch {
		case strings.Contains(v.GitVersion, "-gke."):
			return PlatformGKE, nil
		case strings.Contains(v.GitVersion, "-eks-"):
			return PlatformEKS, nil
		}
	}
	return PlatformKubernetes, nil
}

// Platform is the cluster's platform: cluster.platform, else what
// discovery says (read once per run).
func (b *Backend) Platform(ctx context.Context) (string, error) { return b.platform(ctx) }

// platform is cluster.platform, else what discovery says (once per run).
func (b *Backend) platform(ctx context.Context) (string, error) {
	b.mu.Lock()
	p := b.plat
	b.mu.Unlock()
	if p != "" {
		return p, nil
	}
	if p = b.sc.Cluster.Platform; p == "" || p == scenarios.PlatformAuto {
		var err error
		if p, err = DetectPlatform(ctx, b.client); err != nil {
			return "", err
		}
		b.progressf("platform: %s (detected; cluster.platform overrides)", p)
	}
	b.mu.Lock()
	b.plat = p
	b.mu.Unlock()
	return p, nil
}

// podSecurityLevel is the least PodSecurity level that admits every pod:
// baseline, or privileged for a pod that adds a capability baseline does
// not allow, runs privileged, shares a host namespace, uses a host port or
// mounts a host path. (rdmabench's pods run as root, so never restricted.)
func podSecurityLevel(pods []*corev1.Pod) string {
	for _, p := range pods {
		if p.Spec.HostNetwork || p.Spec.HostPID || p.Spec.HostIPC {
			return levelPrivileged
		}
		for _, v := range p.Spec.Volumes {
			if v.HostPath != nil {
				return levelPrivileged
			}
		}
		for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
			if sc := c.SecurityContext; sc != nil {
				if sc.Privileged != nil && *sc.Privileged {
					return levelPrivileged
				}
				if sc.Capabilities != nil {
					for _, cp := range sc.Capabilities.Add {
						if !slices.Contains(baselineCapabilities, string(cp)) {
							return levelPrivileged
						}
					}
				}
			}
			for _, port := range c.Ports {
				if port.HostPort != 0 {
					return levelPrivileged
				}
			}
		}
	}
	return levelBaseline
}

// podSecurityLabels are the labels of a namespace rdmabench creates: the
// level its pods need, enforced, and the same for warnings and audit so a
// cluster whose defaults are stricter does not flood the run with them.
func podSecurityLabels(level string) map[string]string {
	return map[string]string{PodSecurityEnforce: level, PodSecurityWarn: level, PodSecurityAudit: level}
}

// AdmissionError is a run's pod refused by the cluster's admission (an
// OpenShift SCC, PodSecurity, a policy or webhook, a quota), found by a
// server-side dry run before any pod was created. It carries the API's
// own words and the command that fixes it; the run exits 3.
type AdmissionError struct {
	Pod      string
	Platform string
	Msg      string // the API's message
	Fix      string // the command (or change) that fixes it
}

func (e *AdmissionError) Error() string {
	return fmt.Sprintf("kube: the cluster's admission refuses the run's pods (server-side dry run of pod %s on %s, before creating any): %s\n  fix: %s",
		e.Pod, e.Platform, e.Msg, e.Fix)
}

// checkAdmission creates the first pod of each pool with dryRun=All: the
// apiserver runs every admission step (SCC, PodSecurity, policies,
// webhooks, quota) and stores nothing. A refusal fails the run before any
// pod exists, with the API's words and the fix.
func (b *Backend) checkAdmission(ctx context.Context, pods []*corev1.Pod, level string) error {
	plat, err := b.platform(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	seen := map[string]bool{}
	var sccs []string
	for _, pod := range pods {
		pool := pod.Labels[LabelPool]
		if seen[pool] {
			continue
		}
		seen[pool] = true
		var got *corev1.Pod
		err := retry(ctx, func() (err error) {
			got, err = b.client.CoreV1().Pods(b.namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
		if err != nil {
			if refused(err) {
				return &AdmissionError{Pod: pod.Name, Platform: plat, Msg: apiMessage(err),
					Fix: b.admissionFix(plat, pod, level, apiMessage(err))}
			}
			return createError(pod.Name, err)
		}
		if scc := got.Annotations["openshift.io/scc"]; scc != "" && !slices.Contains(sccs, scc) {
			sccs = append(sccs, scc)
		}
	}
	under := ""
	if len(sccs) > 0 {
		under = " under SCC " + strings.Join(sccs, ", ")
	}
	b.progressf("admission: %d pod(s) admitted by a server-side dry run%s in %s", len(seen), under, time.Since(start).Round(time.Millisecond))
	return nil
}

// refused: the API looked at the pod and said no (as opposed to an API
// that could not be reached).
func refused(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

// apiMessage is the API's own message for err.
func apiMessage(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok && s.Status().Message != "" {
		return s.Status().Message
	}
	return err.Error()
}

// admissionFix is the command that lets the refused pod in, from what the
// API said and the platform.
func (b *Backend) admissionFix(plat string, pod *corev1.Pod, level, msg string) string {
	ns, sa := b.namespace, pod.Spec.ServiceAccountName
	switch {
	case strings.Contains(msg, "cannot create resource \"pods\""):
		return fmt.Sprintf("grant the run's user the Role of deploy/rbac.yaml in namespace %s: kubectl apply -f deploy/rbac.yaml (for namespace rdmabench), or bind role rdmabench there", ns)
	case strings.Contains(msg, "serviceaccount") && strings.Contains(msg, "not found"):
		return fmt.Sprintf("kubectl create serviceaccount %s -n %s   (deploy/rbac.yaml makes rdmabench in namespace rdmabench)", sa, ns)
	case strings.Contains(msg, "security context constraint") || plat == PlatformOpenShift && strings.Contains(msg, "forbidden"):
		return sccFix(ns, sa)
	case strings.Contains(msg, "violates PodSecurity"):
		why := "the level the run's pods need"
		if level == levelPrivileged {
			why = "the run's pods add IPC_LOCK, beyond " + levelBaseline
		}
		return fmt.Sprintf("kubectl label --overwrite namespace %s %s=%s   (%s; or run in a namespace rdmabench creates, which it labels so)",
			ns, PodSecurityEnforce, level, why)
	case strings.Contains(msg, "exceeded quota"):
		return fmt.Sprintf("the ResourceQuota of namespace %s is too small for the run's pods: raise it (kubectl describe resourcequota -n %s) or lower the pools' cpu and memory", ns, ns)
	}
	return fmt.Sprintf("the message names the rule (a policy or webhook) that refused the pod; see it with: rdmabench plan SCENARIO -o manifests -n %s | kubectl apply --dry-run=server -f -", ns)
}

// sccFix: the SCC and its use by the pods' ServiceAccount, which
// deploy/openshift grants to rdmabench/rdmabench.
func sccFix(ns, sa string) string {
	switch {
	case sa == "":
		return "set cluster.serviceAccount: rdmabench and run in namespace rdmabench, then: oc apply -f deploy/rbac.yaml -f deploy/openshift/   (the ServiceAccount, the SCC " + SCCName + " and its use)"
	case ns == scenarios.DefaultNamespace && sa == "rdmabench":
		return "oc apply -f deploy/openshift/   (the SCC " + SCCName + " and its use by ServiceAccount rdmabench in namespace rdmabench)"
	}
	return fmt.Sprintf("oc apply -f deploy/openshift/scc.yaml -f deploy/openshift/rbac.yaml && oc create rolebinding rdmabench-scc -n %s --clusterrole=%s --serviceaccount=%s:%s",
		ns, SCCRole, ns, sa)
}
