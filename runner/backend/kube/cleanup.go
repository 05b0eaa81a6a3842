package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Cleanup kills every tool still running (its whole process group in its
// pod), deletes the run's pods and owner ConfigMap by label, waits until
// the pods are gone, and deletes the namespace when the run created it.
// It works on a fresh context after Ctrl-C and is bounded by ctx.
func (b *Backend) Cleanup(ctx context.Context) error {
	// Each kill has a bound of its own, well inside ctx: a tool whose
	// process group never became known (a stuck stream) must not use up
	// the time the pods' deletion needs.
	_ = b.procs.KillAll(ctx, func(*process) time.Duration { return b.killBound }, (*process).kill)
	b.closeSessions()
	b.mu.Lock()
	for _, stop := range b.stops {
		close(stop)
	}
	b.stops = nil
	createdNS, created := b.createdNS, b.ownerCreated || len(b.pods) > 0
	b.mu.Unlock()
	if !created && !createdNS {
		return nil // nothing was made: nothing to look for
	}
	n, err := Clean(ctx, b.client, CleanOptions{Namespace: b.namespace, RunID: b.opts.RunID, Wait: b.opts.DeleteTimeout, DeleteNamespaces: createdNS})
	if n > 0 {
		b.progressf("removed %d pod(s) of run %s from namespace %s", n, b.opts.RunID, b.namespace)
	}
	return err
}

// CleanupBound is how long Cleanup may take: pods take a while to go,
// and an apiserver that is restarting is waited for.
func (b *Backend) CleanupBound() time.Duration { return 3 * time.Minute }

// KeepHint says how to remove what --keep left in place.
func (b *Backend) KeepHint() string {
	return fmt.Sprintf("pods left in namespace %s; remove them with: rdmabench clean --run %s -n %s", b.namespace, b.opts.RunID, b.namespace)
}

// CleanOptions select what Clean removes.
type CleanOptions struct {
	// Namespace to clean; "" cleans every namespace (with --all).
	Namespace string
	// RunID removes that run's objects; "" removes every run's.
	RunID string
	// Wait bounds waiting until the pods are gone (0: do not wait).
	Wait time.Duration
	// DeleteNamespaces also deletes namespaces rdmabench created for the
	// selected run(s); a namespace it did not create is never deleted.
	DeleteNamespaces bool
}

// Clean removes what runs left: pods and ConfigMaps labelled with the run
// (or any run), and namespaces rdmabench created for them. It returns how
// many pods it deleted.
func Clean(ctx context.Context, client kubernetes.Interface, o CleanOptions) (int, error) {
	set := labels.Set{LabelManagedBy: managedBy}
	if o.RunID != "" {
		set[LabelRun] = o.RunID
	}
	sel := labels.SelectorFromSet(set).String()
	if o.RunID == "" {
		sel = labels.SelectorFromSet(labels.Set{LabelManagedBy: managedBy}).String() + "," + LabelRun
	}
	lo := metav1.ListOptions{LabelSelector: sel}
	var errs []error
	var pods *corev1.PodList
	err := retry(ctx, func() (err error) {
		pods, err = client.CoreV1().Pods(o.Namespace).List(ctx, lo)
		return err
	})
	if err != nil {
		hint := ""
		if o.Namespace == "" && apierrors.IsForbidden(err) {
			hint = " (without -n every namespace is searched, which needs a ClusterRole; name the run's namespace with -n)"
		}
		return 0, fmt.Errorf("kube: listing the run's pods: %w%s", err, hint)
	}
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	for _, p := range pods.Items {
		err := retry(ctx, func() error { return client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, del) })
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	var cms *corev1.ConfigMapList
	err = retry(ctx, func() (err error) {
		cms, err = client.CoreV1().ConfigMaps(o.Namespace).List(ctx, lo)
		return err
	})
	if err == nil {
		for _, c := range cms.Items {
			err := retry(ctx, func() error {
				return client.CoreV1().ConfigMaps(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{})
			})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting configmap %s/%s: %w", c.Namespace, c.Name, err))
			}
		}
	}
	var svcs *corev1.ServiceList
	err = retry(ctx, func() (err error) {
		svcs, err = client.CoreV1().Services(o.Namespace).List(ctx, lo)
		return err
	})
	if err == nil {
		for _, sv := range svcs.Items {
			err := retry(ctx, func() error {
				return client.CoreV1().Services(sv.Namespace).Delete(ctx, sv.Name, metav1.DeleteOptions{})
			})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting service %s/%s: %w", sv.Namespace, sv.Name, err))
			}
		}
	}
	var policies *networkingv1.NetworkPolicyList
	err = retry(ctx, func() (err error) {
		policies, err = client.NetworkingV1().NetworkPolicies(o.Namespace).List(ctx, lo)
		return err
	})
	if err == nil {
		for _, np := range policies.Items {
			err := retry(ctx, func() error {
				return client.NetworkingV1().NetworkPolicies(np.Namespace).Delete(ctx, np.Name, metav1.DeleteOptions{})
			})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting networkpolicy %s/%s: %w", np.Namespace, np.Name, err))
			}
		}
	}
	if o.Wait > 0 && len(pods.Items) > 0 {
		if err := waitGone(ctx, client, o.Namespace, lo, o.Wait); err != nil {
			errs = append(errs, err)
		}
	}
	if o.DeleteNamespaces {
		errs = append(errs, deleteNamespaces(ctx, client, o)...)
	}
	return len(pods.Items), errors.Join(errs...)
}

// deleteNamespaces deletes the namespaces rdmabench created for the
// selected run(s), found by their created-by label: never another.
func deleteNamespaces(ctx context.Context, client kubernetes.Interface, o CleanOptions) []error {
	set := labels.Set{LabelCreatedBy: managedBy}
	if o.RunID != "" {
		set[LabelRun] = o.RunID
	}
	var nss *corev1.NamespaceList
	err := retry(ctx, func() (err error) {
		nss, err = client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(set).String()})
		return err
	})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil
		}
		return []error{fmt.Errorf("listing namespaces: %w", err)}
	}
	var errs []error
	for _, ns := range nss.Items {
		if o.Namespace != "" && ns.Name != o.Namespace {
			continue
		}
		if o.RunID != "" {
			// Another run may have come to the namespace this one made:
			// deleting it would kill that run's pods.
			if other := otherRuns(ctx, client, ns.Name, o.RunID); len(other) > 0 {
				errs = append(errs, fmt.Errorf("namespace %s (created by run %s) kept: run(s) %s still have pods in it; remove it with: rdmabench clean --all -n %s",
					ns.Name, o.RunID, strings.Join(other, ", "), ns.Name))
				continue
			}
		}
		err := retry(ctx, func() error { return client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}) })
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting namespace %s: %w", ns.Name, err))
		}
	}
	return errs
}

// otherRuns are the runs other than runID that have pods in namespace ns.
func otherRuns(ctx context.Context, client kubernetes.Interface, ns, runID string) []string {
	sel := labels.SelectorFromSet(labels.Set{LabelManagedBy: managedBy}).String() + "," + LabelRun + "," + LabelRun + "!=" + runID
	var pods *corev1.PodList
	err := retry(ctx, func() (err error) {
		pods, err = client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		return err
	})
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range pods.Items {
		if r := p.Labels[LabelRun]; r != runID && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// waitGone polls until no pod matches, bounded by d.
func waitGone(ctx context.Context, client kubernetes.Interface, ns string, lo metav1.ListOptions, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		pods, err := client.CoreV1().Pods(ns).List(ctx, lo)
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			left := "?"
			if pods != nil {
				left = fmt.Sprint(len(pods.Items))
			}
			return fmt.Errorf("kube: %s pod(s) still terminating after %s (kubectl get pods -n %s -l %s)", left, d, ns, lo.LabelSelector)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
