package kube

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// ManifestOptions say which run the manifests describe.
type ManifestOptions struct {
	RunID     string // as in the objects' names and labels
	Namespace string // overrides cluster.namespace (-n)
	Etcd      bool   // the plan has nixlbench jobs: nixlbench's etcd pod and Service
	// Platform shapes what differs between platforms (the etcd pod's
	// user: OpenShift assigns one); "" is plain Kubernetes.
	Platform string
}

// Manifests are every object a run creates, for `rdmabench plan -o
// manifests`: the namespace (created only when it is missing), the run's
// ConfigMap, one pod per endpoint and, for nixlbench, the etcd pod and
// Service. The same code builds them as Provision and StartEtcd do. Owner
// references need the ConfigMap's UID, known only once it exists, so the
// printed pods carry none; the run's labels select everything.
func Manifests(sc *scenarios.Scenario, eps []endpoint.Endpoint, o ManifestOptions) ([]runtime.Object, error) {
	if sc == nil || sc.Cluster == nil {
		return nil, fmt.Errorf("kube: the scenario has no cluster section (manifests are for backend: kube)")
	}
	if err := checkRunID(o.RunID); err != nil {
		return nil, err
	}
	ns := sc.Cluster.Namespace
	if o.Namespace != "" {
		ns = o.Namespace
	}
	b := &Backend{opts: Options{RunID: o.RunID}, sc: sc, namespace: ns, plat: o.Platform}
	var pods []*corev1.Pod
	for _, ep := range eps {
		pod, err := b.podFor(ep, nil)
		if err != nil {
			return nil, err
		}
		pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		pods = append(pods, pod)
	}
	namespace := b.namespaceObject(podSecurityLevel(pods))
	namespace.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
	objs := []runtime.Object{
		namespace,
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: b.ownerName(), Namespace: ns, Labels: b.runLabels()},
			Data:       map[string]string{"scenario": sc.Metadata.Name, "run": o.RunID}},
	}
	for _, pod := range pods {
		objs = append(objs, pod)
	}
	if o.Etcd {
		pod, svc := b.etcdObjects(nil)
		objs = append(objs, pod, svc, b.etcdPolicy(nil))
	}
	return objs, nil
}

// ManifestObject is one document of a manifest, decoded.
type ManifestObject struct {
	Kind   string
	Object runtime.Object
}

// DecodeManifest reads a multi-document YAML stream (what WriteManifest
// prints, or deploy/rbac.yaml) into typed objects, strictly, as `kubectl
// apply --dry-run=client` does: an unknown or misspelt field is an error
// naming the document. Empty and comment-only documents are skipped.
func DecodeManifest(data []byte) ([]ManifestObject, error) {
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	rd := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []ManifestObject
	for i := 1; ; i++ {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("manifest document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return out, fmt.Errorf("manifest document %d: %w\n%s", i, err, doc)
		}
		out = append(out, ManifestObject{Kind: gvk.Kind, Object: obj})
	}
}

// stripComments drops whole-line YAML comments.
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
