package kube

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// scc is the part of OpenShift's SecurityContextConstraints (API
// security.openshift.io/v1) deploy/openshift sets; decoding refuses any
// other field, so a misspelt one fails here rather than on a cluster.
type scc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	RunAsUser struct {
		Type string `json:"type"`
		UID  *int64 `json:"uid"`
	} `json:"runAsUser"`
	RequiredDropCapabilities        []string `json:"requiredDropCapabilities"`
	AllowedCapabilities             []string `json:"allowedCapabilities"`
	DefaultAddCapabilities          []string `json:"defaultAddCapabilities"`
	AllowPrivilegedContainer        bool     `json:"allowPrivilegedContainer"`
	AllowPrivilegeEscalation        *bool    `json:"allowPrivilegeEscalation"`
	DefaultAllowPrivilegeEscalation *bool    `json:"defaultAllowPrivilegeEscalation"`
	AllowHostNetwork                bool     `json:"allowHostNetwork"`
	AllowHostPorts                  bool     `json:"allowHostPorts"`
	AllowHostPID                    bool     `json:"allowHostPID"`
	AllowHostIPC                    bool     `json:"allowHostIPC"`
	AllowHostDirVolumePlugin        bool     `json:"allowHostDirVolumePlugin"`
	ReadOnlyRootFilesystem          bool     `json:"readOnlyRootFilesystem"`
	SELinuxContext                  struct {
		Type string `json:"type"`
	} `json:"seLinuxContext"`
	SeccompProfiles []string `json:"seccompProfiles"`
	FSGroup         struct {
		Type string `json:"type"`
	} `json:"fsGroup"`
	SupplementalGroups struct {
		Type string `json:"type"`
	} `json:"supplementalGroups"`
	Volumes  []string `json:"volumes"`
	Users    []string `json:"users"`
	Groups   []string `json:"groups"`
	Priority *int     `json:"priority"`
}

func loadSCC(t *testing.T) scc {
	t.Helper()
	data, err := os.ReadFile("../../../deploy/openshift/scc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var s scc
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("deploy/openshift/scc.yaml: %v", err)
	}
	return s
}

// shippedKubePods are the pods `plan -o manifests` prints for every
// shipped kube scenario.
func shippedKubePods(t *testing.T) map[string][]*corev1.Pod {
	t.Helper()
	out := map[string][]*corev1.Pod{}
	for _, sh := range scenarios.ShippedScenarios() {
		sc, err := scenarios.LoadBytes(sh.Name+".yaml", sh.Data)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Backend != scenarios.BackendKube {
			continue
		}
		p, err := plan.Compile(sc, plan.CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Manifests(sc, p.Endpoints, ManifestOptions{RunID: "20261124-061500-ab12", Etcd: p.NeedsEtcd, Platform: PlatformOpenShift})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if pod, ok := o.(*corev1.Pod); ok {
				out[sh.Name] = append(out[sh.Name], pod)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no shipped kube scenario")
	}
	return out
}

// TestOpenShiftSCCAllowsExactlyWhatThePodsNeed: deploy/openshift/scc.yaml
// decodes with the SCC's own field names, and admits every pod of every
// shipped kube scenario by the rules OpenShift applies (capabilities added
// within allowedCapabilities, the UID it fixes, no host namespaces or
// privilege, its volume types and seccomp profile); and it allows no
// capability that none of them adds. The kube lane applies the same file
// to an apiserver with the SCC API served and a policy enforcing it.
func TestOpenShiftSCCAllowsExactlyWhatThePodsNeed(t *testing.T) {
	s := loadSCC(t)
	if s.APIVersion != "security.openshift.io/v1" || s.Kind != "SecurityContextConstraints" || s.Metadata.Name != SCCName {
		t.Fatalf("%s %s %s", s.APIVersion, s.Kind, s.Metadata.Name)
	}
	if s.RunAsUser.Type != "MustRunAs" || s.RunAsUser.UID == nil || *s.RunAsUser.UID != RootUID {
		t.Errorf("runAsUser %+v, want MustRunAs uid %d", s.RunAsUser, RootUID)
	}
	if !slices.Equal(s.RequiredDropCapabilities, []string{"ALL"}) || s.AllowPrivilegedContainer || s.AllowHostNetwork || s.AllowHostPID || s.AllowHostIPC {
		t.Errorf("the SCC must drop ALL and allow no host namespace nor privilege: %+v", s)
	}
	used := map[string]bool{}
	for name, pods := range shippedKubePods(t) {
		for _, pod := range pods {
			if pod.Labels[LabelRole] == roleEtcd {
				continue // runs under restricted-v2
			}
			if pod.Spec.HostNetwork || pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.SeccompProfile == nil ||
				pod.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || !slices.Contains(s.SeccompProfiles, "runtime/default") {
				t.Errorf("%s %s: pod security context %+v", name, pod.Name, pod.Spec.SecurityContext)
			}
			for _, v := range pod.Spec.Volumes {
				if typ := volumeType(v); !slices.Contains(s.Volumes, typ) {
					t.Errorf("%s %s: volume %s of type %s, not in the SCC's volumes %v", name, pod.Name, v.Name, typ, s.Volumes)
				}
			}
			for _, c := range pod.Spec.Containers {
				sc := c.SecurityContext
				if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != RootUID || sc.Privileged != nil && *sc.Privileged ||
					sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
					!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
					t.Errorf("%s %s: container %s security context %+v", name, pod.Name, c.Name, sc)
					continue
				}
				for _, cp := range sc.Capabilities.Add {
					used[string(cp)] = true
					if !slices.Contains(s.AllowedCapabilities, string(cp)) {
						t.Errorf("%s %s: adds %s, which the SCC does not allow", name, pod.Name, cp)
					}
				}
			}
		}
	}
	for _, cp := range s.AllowedCapabilities {
		if !used[cp] {
			t.Errorf("the SCC allows %s, which no shipped scenario's pod adds", cp)
		}
	}
}

// volumeType is a volume's source as an SCC's volumes list names it.
func volumeType(v corev1.Volume) string {
	switch {
	case v.EmptyDir != nil:
		return "emptyDir"
	case v.ConfigMap != nil:
		return "configMap"
	case v.Secret != nil:
		return "secret"
	case v.Projected != nil:
		return "projected"
	case v.DownwardAPI != nil:
		return "downwardAPI"
	case v.HostPath != nil:
		return "hostPath"
	case v.PersistentVolumeClaim != nil:
		return "persistentVolumeClaim"
	}
	return "other"
}

// TestOpenShiftRBACGrantsUseOfTheSCC: deploy/openshift/rbac.yaml decodes
// strictly and binds `use` of exactly the SCC to the ServiceAccount of
// deploy/rbac.yaml, with the ClusterRole the fix hint names.
func TestOpenShiftRBACGrantsUseOfTheSCC(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/openshift/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	var binding *rbacv1.RoleBinding
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *rbacv1.ClusterRole:
			role = o
		case *rbacv1.RoleBinding:
			binding = o
		default:
			t.Errorf("unexpected %s", d.Kind)
		}
	}
	if role == nil || role.Name != SCCRole || len(role.Rules) != 1 {
		t.Fatalf("ClusterRole %+v", role)
	}
	r := role.Rules[0]
	if !slices.Equal(r.APIGroups, []string{openShiftSecurityGroup}) || !slices.Equal(r.Resources, []string{"securitycontextconstraints"}) ||
		!slices.Equal(r.ResourceNames, []string{SCCName}) || !slices.Equal(r.Verbs, []string{"use"}) {
		t.Errorf("rule %+v: want use of securitycontextconstraints/%s only", r, SCCName)
	}
	if binding == nil || binding.Namespace != scenarios.DefaultNamespace || binding.RoleRef.Name != SCCRole || len(binding.Subjects) != 1 ||
		binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != "rdmabench" || binding.Subjects[0].Namespace != scenarios.DefaultNamespace {
		t.Errorf("RoleBinding %+v", binding)
	}
	if fix := sccFix("bench", "runner"); !strings.Contains(fix, "--clusterrole="+SCCRole) || !strings.Contains(fix, "--serviceaccount=bench:runner") {
		t.Errorf("fix %q", fix)
	}
}
