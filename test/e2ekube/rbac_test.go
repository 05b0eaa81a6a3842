package e2ekube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// A run with nothing but the shipped least-privilege RBAC: deploy/rbac.yaml
// applied as a user would, then `rdmabench run` with the ServiceAccount's
// token. Any API call the backend makes beyond the Role fails the run.
func TestRunWithTheShippedLeastPrivilegeRBAC(t *testing.T) {
	c := needCluster(t)
	objs := applyManifest(t, c, "../../deploy/rbac.yaml")
	t.Cleanup(func() { deleteObjects(c, objs) })
	nsObjs := applyManifest(t, c, "../../deploy/rbac-namespaces.yaml") // the optional namespace role, tested below
	t.Cleanup(func() { deleteObjects(c, nsObjs) })
	kubeconfig := serviceAccountKubeconfig(t, c, "rdmabench", "rdmabench")
	sc := tcpScenario("rdmabench", "", "")
	sc = sc[:strings.Index(sc, "tests:")] + "tests:\n  - name: iperf3\n    tool: iperf3\n    from: decode\n    to: prefill\n    pattern: many-to-one\n    args: {duration: 1s}\n"
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil, "--kubeconfig", kubeconfig)
	if r.code != 0 || r.rep == nil || len(r.rep.Results) != 2 {
		t.Fatalf("exit %d with the least-privilege token; want 0 and 2 results", r.code)
	}
	assertNothingLeft(t, c)

	// The token really is limited: another namespace is refused, with the
	// API's own words.
	other := strings.Replace(sc, "namespace: rdmabench", "namespace: e2e-rbac-other", 1)
	createNamespace(t, c, "e2e-rbac-other")
	r = run(t, c, writeScenario(t, other), time.Minute, nil, "--kubeconfig", kubeconfig)
	if r.code != 3 || !strings.Contains(r.stderr, "forbidden") {
		t.Fatalf("exit %d in a namespace the Role does not cover; want 3 and the API's refusal", r.code)
	}
	assertNothingLeft(t, c)

	// The namespace role deletes only namespaces rdmabench created: the
	// shipped ValidatingAdmissionPolicy refuses the ServiceAccount any
	// other, and a create without the label.
	sa := clientFor(t, kubeconfig)
	ctx := context.Background()
	if err := waitFor(func() error {
		err := sa.CoreV1().Namespaces().Delete(ctx, "e2e-rbac-other", metav1.DeleteOptions{})
		if err == nil || !strings.Contains(err.Error(), "rdmabench may delete only namespaces labelled rdmabench.io/created-by=rdmabench; e2e-rbac-other is not") {
			return fmt.Errorf("deleting a namespace rdmabench did not create, as its ServiceAccount: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	plain := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-rbac-plain"}}
	if _, err := sa.CoreV1().Namespaces().Create(ctx, plain, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "rdmabench may create only namespaces labelled") {
		t.Errorf("creating an unlabelled namespace as the ServiceAccount: %v", err)
	}
	mine := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-rbac-mine", Labels: map[string]string{kube.LabelCreatedBy: "rdmabench"}}}
	if _, err := sa.CoreV1().Namespaces().Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a labelled namespace as the ServiceAccount: %v", err)
	}
	if err := sa.CoreV1().Namespaces().Delete(ctx, "e2e-rbac-mine", metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting the namespace it labelled, as the ServiceAccount: %v", err)
	}
}

// waitFor retries f (bounded) while it fails: a policy or binding just
// created takes a moment to be enforced.
func waitFor(f func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// applyManifest creates every object of a YAML manifest (typed, strict).
func applyManifest(t *testing.T, c *cluster.Cluster, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := c.Client()
	docs, err := kube.DecodeManifest(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var objs []runtime.Object
	for _, d := range docs {
		obj := d.Object
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *admissionv1.ValidatingAdmissionPolicy:
			_, err = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, o, metav1.CreateOptions{})
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			_, err = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("%s: unexpected %T", path, obj)
		}
		if err != nil {
			t.Fatalf("%s: create %T: %v", path, obj, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

func deleteObjects(c *cluster.Cluster, objs []runtime.Object) {
	ctx := context.Background()
	cs := c.Client()
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.Namespace:
			_ = cs.CoreV1().Namespaces().Delete(ctx, o.Name, metav1.DeleteOptions{})
		case *rbacv1.ClusterRole:
			_ = cs.RbacV1().ClusterRoles().Delete(ctx, o.Name, metav1.DeleteOptions{})
		case *rbacv1.ClusterRoleBinding:
			_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{})
		case *admissionv1.ValidatingAdmissionPolicy:
			_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, o.Name, metav1.DeleteOptions{})
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, o.Name, metav1.DeleteOptions{})
		}
	}
}

// serviceAccountKubeconfig is the admin kubeconfig with its user replaced
// by a token of the ServiceAccount (TokenRequest API).
func serviceAccountKubeconfig(t *testing.T, c *cluster.Cluster, ns, sa string) string {
	t.Helper()
	exp := int64(3600)
	cs := c.Client()
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, sa, err)
	}
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Token, ai.ClientCertificate, ai.ClientKey, ai.ClientCertificateData, ai.ClientKeyData = tok.Status.Token, "", "", nil, nil
	}
	path := filepath.Join(t.TempDir(), "sa-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
