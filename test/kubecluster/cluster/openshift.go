package cluster

import (
	"context"
	_ "embed" // the OpenShift stand-in's manifests
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The OpenShift security stand-in: the SecurityContextConstraints API
// served by a CRD (discovery then shows security.openshift.io, as on
// OpenShift) and SCC admission as ValidatingAdmissionPolicies (restricted-v2
// for everyone; the SCC rdmabench for accounts RBAC lets use it).
var (
	//go:embed openshift/scc-crd.yaml
	sccCRD []byte
	//go:embed openshift/scc-admission.yaml
	sccAdmission []byte
)

// ServeOpenShiftSecurity makes the cluster look like OpenShift to its
// clients and enforce SCC admission (openshift/scc-admission.yaml), and
// returns once a pod restricted-v2 refuses is refused. undo removes it all
// again (the SCC objects go with their CRD).
func (c *Cluster) ServeOpenShiftSecurity(ctx context.Context) (undo func(context.Context) error, err error) {
	crd, err := c.Apply(ctx, sccCRD)
	if err != nil {
		return nil, fmt.Errorf("SCC API: %w", err)
	}
	policies, err := c.Apply(ctx, sccAdmission)
	undo = func(ctx context.Context) error {
		err := c.Delete(ctx, append(crd, policies...))
		// A deleted policy also takes a moment to stop refusing: the next
		// test's pods must not meet it.
		return errors.Join(err, c.waitGroupGone(ctx, "security.openshift.io"), c.waitSCC(ctx, false))
	}
	if err == nil {
		err = c.waitSCC(ctx, true)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("SCC admission: %w", err), undo(ctx))
	}
	return undo, nil
}

// sccProbeRBAC lets the user scc-probe create pods in default, and
// nothing else: no SCC.
const sccProbeRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: scc-probe, namespace: default}
rules: [{apiGroups: [""], resources: [pods], verbs: [create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: scc-probe, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: scc-probe}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: scc-probe}]
`

// waitSCC dry-runs a pod that adds IPC_LOCK, as a user allowed to create
// pods but no SCC, until the policy refuses it (enforced) or no longer does
// (lifted): a policy takes a moment to be compiled and take effect, and
// to stop once deleted.
func (c *Cluster) waitSCC(ctx context.Context, enforced bool) (err error) {
	rbac, err := c.Apply(ctx, []byte(sccProbeRBAC))
	defer func() { err = errors.Join(err, c.Delete(context.Background(), rbac)) }()
	if err != nil {
		return err
	}
	cfg := c.restConfig("admin")
	cfg.Impersonate.UserName = "scc-probe"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "scc-probe", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "probe",
			SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"IPC_LOCK"}}}}}}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused := apierrors.IsForbidden(err) && strings.Contains(err.Error(), "security context constraint")
		switch {
		// Lifted only once the pod is admitted: a Forbidden for another
		// reason (the probe's Role not yet seen by the RBAC authorizer)
		// says nothing of the policy.
		case enforced && refused, !enforced && err == nil:
			return nil
		case time.Now().After(deadline) && enforced:
			return fmt.Errorf("a pod adding IPC_LOCK is still not refused after 60s (last: %v)", err)
		case time.Now().After(deadline):
			return fmt.Errorf("a pod adding IPC_LOCK is still refused 60s after the SCC policies were deleted (last: %v)", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitGroupGone waits (bounded) until discovery no longer serves group.
func (c *Cluster) waitGroupGone(ctx context.Context, group string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		groups, err := c.client.Discovery().ServerGroups()
		if err == nil && !servesGroup(groups, group) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the %s API is still served 60s after its CRD was deleted", group)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func servesGroup(groups *metav1.APIGroupList, name string) bool {
	for _, g := range groups.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}
