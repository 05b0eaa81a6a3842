package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// shipped reads deploy/FILE's objects, indexed as "Kind/name".
func shipped(t *testing.T, file string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "deploy", file))
	if err != nil {
		t.Fatal(err)
	}
	return byKindName(docs(t, string(data)))
}

// The SCC and its grant come with the chart where the cluster is OpenShift
// (discovery serves security.openshift.io/v1, which Helm hands the
// templates as .Capabilities), or where a value says so; never elsewhere.
func TestChartOpenShiftSCCOnlyWhereServed(t *testing.T) {
	const openshift = "security.openshift.io/v1"
	for _, tc := range []struct {
		name   string
		scc    any
		create bool
		apis   []string
		want   []string
	}{
		{"auto on Kubernetes", "auto", true, nil, nil},
		{"auto on OpenShift", "auto", true, []string{openshift}, []string{"SecurityContextConstraints/rdmabench", "ClusterRole/system:openshift:scc:rdmabench", "RoleBinding/rdmabench-scc"}},
		{"forced", true, true, nil, []string{"SecurityContextConstraints/rdmabench", "ClusterRole/system:openshift:scc:rdmabench", "RoleBinding/rdmabench-scc"}},
		{"refused on OpenShift", false, true, []string{openshift}, nil},
		{"a second release", "auto", false, []string{openshift}, []string{"RoleBinding/rdmabench-scc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, Options{Namespace: "rdmabench", APIVersions: tc.apis,
				Values: map[string]any{"openshift": map[string]any{"scc": tc.scc, "createSCC": tc.create}}})
			objs := byKindName(docs(t, r.Manifest))
			var got []string
			for _, k := range []string{"SecurityContextConstraints/rdmabench", "ClusterRole/system:openshift:scc:rdmabench", "RoleBinding/rdmabench-scc"} {
				if _, ok := objs[k]; ok {
					got = append(got, k)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("OpenShift objects %v, want %v", got, tc.want)
			}
		})
	}
}

// The chart's SCC, its ClusterRole and the grant are deploy/openshift's,
// field for field (the files there say why each field is what it is).
func TestChartOpenShiftObjectsAreTheShippedOnes(t *testing.T) {
	r := mustRender(t, Options{Namespace: "rdmabench", APIVersions: []string{"security.openshift.io/v1"}})
	have := byKindName(docs(t, r.Manifest))
	want := shipped(t, "openshift/scc.yaml")
	for k, v := range shipped(t, "openshift/rbac.yaml") {
		want[k] = v
	}
	for key, w := range want {
		h, ok := have[key]
		if !ok {
			t.Errorf("the chart has no %s", key)
			continue
		}
		delete(h["metadata"].(map[string]any), "labels") // the files have none
		if !reflect.DeepEqual(h, w) {
			t.Errorf("%s differs from deploy/openshift's:\nchart %v\nfile  %v", key, h, w)
		}
	}
}

// The namespace role comes only when asked, and is deploy/rbac-namespaces.yaml's,
// named per release namespace (cluster-scoped objects of two releases must
// not collide), its policy matching this release's ServiceAccount.
func TestChartNamespaceRoleOnlyWhenAsked(t *testing.T) {
	off := mustRender(t, Options{Namespace: "rdmabench"})
	if strings.Contains(off.Manifest, "namespaces") {
		t.Errorf("the namespace role without namespaceRole.enabled:\n%s", off.Manifest)
	}
	on := mustRender(t, Options{Namespace: "rdmabench", Values: map[string]any{"namespaceRole": map[string]any{"enabled": true}}})
	have := byKindName(docs(t, on.Manifest))
	want := shipped(t, "rbac-namespaces.yaml")
	const name = "rdmabench-namespaces-rdmabench"
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		h, w := have[kind+"/"+name], want[kind+"/rdmabench-namespaces"]
		if h == nil || w == nil {
			t.Fatalf("%s: chart %v, deploy/rbac-namespaces.yaml %v", kind, h != nil, w != nil)
		}
		for _, field := range []string{"rules", "subjects", "spec"} {
			hv, wv := h[field], w[field]
			if field == "spec" && kind == "ValidatingAdmissionPolicyBinding" {
				wv.(map[string]any)["policyName"] = name
			}
			if !reflect.DeepEqual(hv, wv) {
				t.Errorf("%s %s: chart %v, deploy/rbac.yaml %v", kind, field, hv, wv)
			}
		}
		if ref, ok := h["roleRef"].(map[string]any); ok && ref["name"] != name {
			t.Errorf("%s binds %v", kind, ref)
		}
	}
	other := mustRender(t, Options{Namespace: "fabric", Values: map[string]any{"namespaceRole": map[string]any{"enabled": true}}})
	if !strings.Contains(other.Manifest, "request.userInfo.username == 'system:serviceaccount:fabric:rdmabench'") {
		t.Errorf("the policy does not match the release's ServiceAccount:\n%s", other.Manifest)
	}
}
