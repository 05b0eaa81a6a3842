package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// refuseDryRun makes the fake API refuse a dry-run pod create with msg, as
// an admission plugin does (403 Forbidden, the plugin's words).
func refuseDryRun(cs *fake.Clientset, msg string) {
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca := a.(k8stesting.CreateActionImpl)
		if len(ca.CreateOptions.DryRun) == 0 {
			return false, nil, nil
		}
		pod := ca.Object.(*corev1.Pod)
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name, errors.New(msg))
	})
}

func servesOpenShift(cs *fake.Clientset) {
	cs.Resources = append(cs.Resources, &metav1.APIResourceList{GroupVersion: "security.openshift.io/v1",
		APIResources: []metav1.APIResource{{Name: "securitycontextconstraints", Kind: "SecurityContextConstraints"}}})
}

// provisionRefused provisions prefill-0 and decode-0 against a fake API
// whose admission refuses pods with msg, and returns the error and what
// was left in the API.
func provisionRefused(t *testing.T, sc *scenarios.Scenario, msg string, openshift bool) (*AdmissionError, *fake.Clientset) {
	t.Helper()
	sc.Cluster.Networks, sc.Pools[1].Networks = nil, nil
	b, cs := newTestBackend(t, sc)
	refuseDryRun(cs, msg)
	if openshift {
		servesOpenShift(cs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := b.Provision(ctx, planned(t, b.sc, "prefill-0", "decode-0"))
	var ae *AdmissionError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v, want an AdmissionError", err)
	}
	pods, _ := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if len(pods.Items) != 0 {
		t.Errorf("%d pod(s) created after the dry run was refused", len(pods.Items))
	}
	return ae, cs
}

// TestPodSecurityRefusalNamesTheLabelThatFixesIt: a namespace whose
// PodSecurity level is stricter than the pods need refuses the dry run;
// the run stops before creating any pod, with the API's words and the
// kubectl label line. A namespace rdmabench creates carries the level.
func TestPodSecurityRefusalNamesTheLabelThatFixesIt(t *testing.T) {
	msg := `violates PodSecurity "baseline:latest": non-default capabilities (container "tools" must not include "IPC_LOCK" in securityContext.capabilities.add)`
	ae, cs := provisionRefused(t, testScenario(), msg, false)
	if ae.Platform != PlatformKubernetes || !strings.Contains(ae.Error(), msg) ||
		ae.Fix != "kubectl label --overwrite namespace bench pod-security.kubernetes.io/enforce=privileged   (the run's pods add IPC_LOCK, beyond baseline; or run in a namespace rdmabench creates, which it labels so)" {
		t.Errorf("%v\nfix %q", ae, ae.Fix)
	}
	ns, err := cs.CoreV1().Namespaces().Get(context.Background(), "bench", metav1.GetOptions{})
	if err != nil || ns.Labels[PodSecurityEnforce] != "privileged" || ns.Labels[PodSecurityWarn] != "privileged" {
		t.Errorf("the namespace the run created: %v %v", ns.Labels, err)
	}
}

// TestSCCRefusalNamesTheOpenShiftFix: on OpenShift (the
// security.openshift.io API served) a refusal by the SCC admission names
// deploy/openshift, or the role binding for another namespace/account.
func TestSCCRefusalNamesTheOpenShiftFix(t *testing.T) {
	msg := `unable to validate against any security context constraint: [provider "restricted-v2": .containers[0].capabilities.add: Invalid value: "IPC_LOCK": capability may not be added]`
	sc := testScenario()
	sc.Cluster.Namespace, sc.Cluster.ServiceAccount = "rdmabench", "rdmabench"
	ae, _ := provisionRefused(t, sc, msg, true)
	if ae.Platform != PlatformOpenShift || !strings.Contains(ae.Error(), "provider \"restricted-v2\"") ||
		!strings.HasPrefix(ae.Fix, "oc apply -f deploy/openshift/") {
		t.Errorf("%v", ae)
	}
	sc = testScenario()
	sc.Cluster.ServiceAccount = "runner"
	ae, _ = provisionRefused(t, sc, msg, true)
	if !strings.Contains(ae.Fix, "oc create rolebinding rdmabench-scc -n bench --clusterrole=system:openshift:scc:rdmabench --serviceaccount=bench:runner") {
		t.Errorf("fix %q", ae.Fix)
	}
	sc = testScenario()
	sc.Cluster.Platform = scenarios.PlatformKubernetes // told, not detected
	ae, _ = provisionRefused(t, sc, msg, true)
	if ae.Platform != PlatformKubernetes || !strings.Contains(ae.Fix, "deploy/openshift") {
		t.Errorf("cluster.platform kubernetes: %v (the SCC's words still name the SCC fix)", ae)
	}
}

func TestPodSecurityLevel(t *testing.T) {
	caps := func(cs ...corev1.Capability) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{SecurityContext: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: cs}}}}}}
	}
	for _, c := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{caps(), "baseline"},
		{caps("SETUID", "SETGID", "SYS_CHROOT"), "baseline"},
		{caps("IPC_LOCK"), "privileged"},
		{&corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true}}, "privileged"},
	} {
		if got := podSecurityLevel([]*corev1.Pod{c.pod}); got != c.want {
			t.Errorf("%+v: %s, want %s", c.pod.Spec, got, c.want)
		}
	}
}
