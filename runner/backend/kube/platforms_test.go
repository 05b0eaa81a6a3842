package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

const platformScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: platforms}
backend: kube
cluster:
  namespace: bench
  image: serving:1
  toolsImage: tools:1
  serviceAccount: rdmabench
  networks: [rdma-0]
  resources: {vpc.amazonaws.com/efa: "4"}
pools:
  - {name: prefill}
  - {name: decode}
tests:
  - {name: kv, tool: nixlbench, from: decode, to: prefill, args: {op: READ}}
  - {name: bw, tool: ib_write_bw, from: decode, to: prefill}
  - {name: srd, tool: ib_send_bw, from: decode, to: prefill, args: {connection: SRD}}
  - {name: ping, tool: rping, from: decode, to: prefill}
  - {name: ar, tool: nccl, from: prefill, to: decode, args: {collective: all_reduce}}
`

// TestManifestsPerPlatform: what `plan -o manifests` prints for each
// platform, decoded strictly as kubectl would: Multus' annotation on
// Kubernetes and OpenShift, GKE's multi-network annotations on GKE (no
// Multus), the EFA resource on EKS; the etcd pod's UID left to OpenShift.
func TestManifestsPerPlatform(t *testing.T) {
	sc, err := scenarios.LoadBytes("platforms.yaml", []byte(platformScenario))
	if err != nil {
		t.Fatal(err)
	}
	for _, platform := range []string{PlatformKubernetes, PlatformOpenShift, PlatformGKE, PlatformEKS} {
		t.Run(platform, func(t *testing.T) {
			p, err := plan.Compile(sc, plan.CompileOptions{Platform: platform})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Hold(); err != nil {
				t.Fatal(err)
			}
			objs, err := Manifests(sc, p.Endpoints, ManifestOptions{RunID: "20261124-061500-ab12", Etcd: p.NeedsEtcd, Platform: platform})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteManifest(&buf, objs); err != nil {
				t.Fatal(err)
			}
			docs, err := DecodeManifest(buf.Bytes())
			if err != nil {
				t.Fatalf("strict decoding: %v", err)
			}
			for _, d := range docs {
				pod, ok := d.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				if pod.Labels[LabelRole] == roleEtcd {
					if uid := pod.Spec.Containers[0].SecurityContext.RunAsUser; (platform == PlatformOpenShift) != (uid == nil) {
						t.Errorf("etcd pod runAsUser %v on %s", uid, platform)
					}
					continue
				}
				a := pod.Annotations
				switch platform {
				case PlatformGKE:
					var ifs []gkeInterface
					if err := json.Unmarshal([]byte(a[GKEInterfacesAnnotation]), &ifs); err != nil || len(ifs) != 2 || ifs[0] != (gkeInterface{"eth0", "default"}) ||
						ifs[1] != (gkeInterface{"eth1", "rdma-0"}) || a[GKEDefaultInterfaceAnnotation] != "eth0" || a[NetworksAnnotation] != "" {
						t.Errorf("GKE pod annotations %v (%v)", a, err)
					}
				default:
					if a[NetworksAnnotation] != "rdma-0" || a[GKEInterfacesAnnotation] != "" {
						t.Errorf("%s pod annotations %v", platform, a)
					}
				}
				if q := pod.Spec.Containers[0].Resources.Limits["vpc.amazonaws.com/efa"]; q.String() != "4" {
					t.Errorf("EFA limit %s", q.String())
				}
			}
			skipped := map[string]string{}
			for _, s := range p.Skipped {
				skipped[s.Test] = s.Reason
			}
			if platform != PlatformEKS {
				if len(skipped) != 0 {
					t.Errorf("skipped on %s: %v", platform, skipped)
				}
				return
			}
			for _, name := range []string{"bw", "ping"} {
				if !strings.HasPrefix(skipped[name], "EKS with EFA: ") || !strings.Contains(skipped[name], "RC") {
					t.Errorf("%s on EKS: %q; want skipped, RC cannot run over SRD", name, skipped[name])
				}
			}
			for _, name := range []string{"srd", "kv", "ar"} {
				if skipped[name] != "" {
					t.Errorf("%s on EKS skipped: %s", name, skipped[name])
				}
			}
			for _, r := range p.Rounds {
				for _, j := range r.Jobs {
					if j.Test == "kv" && j.Legs[0].Backend != "LIBFABRIC" {
						t.Errorf("nixlbench on EKS: backend %q, want LIBFABRIC", j.Legs[0].Backend)
					}
				}
			}
		})
	}
}

// TestDetectPlatform: OpenShift and GKE by the APIs they serve, GKE and
// EKS by their builds' versions, else plain Kubernetes.
func TestDetectPlatform(t *testing.T) {
	for _, c := range []struct {
		group, version, want string
	}{
		{"security.openshift.io/v1", "v1.32.5", PlatformOpenShift},
		{"networking.gke.io/v1", "v1.33.5-gke.1162000", PlatformGKE},
		{"", "v1.33.5-gke.1162000", PlatformGKE},
		{"", "v1.33.5-eks-113cf36", PlatformEKS},
		{"", "v1.35.0", PlatformKubernetes},
	} {
		cs := fake.NewClientset()
		if c.group != "" {
			cs.Resources = []*metav1.APIResourceList{{GroupVersion: c.group}}
		}
		cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: c.version}
		got, err := DetectPlatform(context.Background(), cs)
		if err != nil || got != c.want {
			t.Errorf("%s %s: %s %v, want %s", c.group, c.version, got, err, c.want)
		}
	}
}

// The pod's data address on GKE comes from networking.gke.io/pod-ips,
// its interface from the interfaces annotation rdmabench wrote.
func TestGKEDataAttachment(t *testing.T) {
	b := &Backend{plat: PlatformGKE}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		GKEPodIPsAnnotation: `[{"networkName":"rdma-0","ip":"192.168.0.7"},{"networkName":"rdma-1","ip":"192.168.1.7"}]`}}}
	att, err := b.dataAttachment(pod, "rdma-0")
	if err != nil || att.IP != "192.168.0.7" || att.Interface != "eth1" || att.Network != "rdma-0" {
		t.Fatalf("%+v %v", att, err)
	}
	if _, err := b.dataAttachment(pod, "rdma-9"); err == nil || !strings.Contains(err.Error(), "rdma-0, rdma-1") {
		t.Fatalf("missing network: %v", err)
	}
}

// The devices a pod was given: PCIDEVICE_ (SR-IOV), on EKS the EFA
// devices, elsewhere a lone device.
func TestDeviceHints(t *testing.T) {
	out := "PCIDEVICE_OPENSHIFT_IO_MLXNICS=0000:3b:02.3,0000:3b:02.4\nPCIDEVICE_OPENSHIFT_IO_MLXNICS_INFO={...}\ngiven=mlx5_7\n"
	if h := parseHints(out, PlatformOpenShift); h.From != "PCIDEVICE_OPENSHIFT_IO_MLXNICS" || len(h.PCIAddresses) != 2 || h.RDMADevice != "" {
		t.Errorf("%+v", h)
	}
	if h := parseHints("given=rdmap16s27\ngiven=rdmap32s27\n", PlatformEKS); h.RDMADevice != "rdmap16s27" || !strings.Contains(h.From, "EFA devices") {
		t.Errorf("%+v", h)
	}
	if h := parseHints("given=mlx5_2\ngiven=mlx5_3\n", PlatformKubernetes); h.From != "" {
		t.Errorf("two devices given and no more said: %+v, want no hint", h)
	}
	if h := parseHints("given=mlx5_2\n", PlatformKubernetes); h.RDMADevice != "mlx5_2" {
		t.Errorf("%+v", h)
	}
}
