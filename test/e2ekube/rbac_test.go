package e2ekube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
