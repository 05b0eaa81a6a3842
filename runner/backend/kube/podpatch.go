package kube

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	sigsjson "sigs.k8s.io/json"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// PatchError is a problem of cluster.podPatch: where in the patch
// ("spec.containers[0].volumeMounts"), what, and how to fix it.
type PatchError struct {
	Path, Msg, Hint string
	// AtKey points at the key (an unknown field) rather than its value.
	AtKey bool
}

func (e *PatchError) Error() string {
	p := "cluster.podPatch"
	if e.Path != "" {
		p += "." + e.Path
	}
	return fmt.Sprintf("%s: %s (%s)", p, e.Msg, e.Hint)
}

// unknownField is how sigs.k8s.io/json names an unknown field's path.
var unknownField = regexp.MustCompile(`^unknown field "(.*)"$`)

// checkPatch decodes the patch alone into a Pod, strictly, as the
// apiserver reads a manifest: every unknown field, with its path.
func checkPatch(patch map[string]any) []*PatchError {
	data, err := json.Marshal(patch)
	if err != nil {
		return []*PatchError{{Msg: err.Error(), Hint: "write the patch as YAML mappings and lists"}}
	}
	strict, err := sigsjson.UnmarshalStrict(data, &corev1.Pod{})
	var out []*PatchError
	if err != nil {
		out = append(out, &PatchError{Msg: strings.TrimPrefix(err.Error(), "json: "), Hint: "write each field with the type the Pod API gives it (kubectl explain pod.spec)"})
	}
	for _, e := range strict {
		m := unknownField.FindStringSubmatch(e.Error())
		if m == nil {
			out = append(out, &PatchError{Msg: e.Error(), Hint: "see kubectl explain pod"})
			continue
		}
		if last := m[1][strings.LastIndexAny(m[1], ".]")+1:]; strings.HasPrefix(last, "$") {
			continue // a strategic merge directive ($patch, $setElementOrder …)
		}
		out = append(out, &PatchError{Path: m[1], Msg: fmt.Sprintf("unknown field %q of the Pod API", m[1]),
			Hint: "see kubectl explain pod." + strings.Join(indexless(m[1]), "."), AtKey: true})
	}
	return out
}

// indexless drops list indexes from a path, as kubectl explain reads it.
func indexless(path string) []string {
	var out []string
	for _, p := range strings.Split(path, ".") {
		if i := strings.IndexByte(p, '['); i >= 0 {
			p = p[:i]
		}
		out = append(out, p)
	}
	return out
}

// applyPodPatch lays the patch over the pod as `kubectl patch
// --type=strategic` does (containers merged by name, so a patch of the
// container "tools" changes the tools container and another name adds a
// sidecar), then checks that what rdmabench owns is as it made it.
func applyPodPatch(pod *corev1.Pod, patch map[string]any) (*corev1.Pod, error) {
	if errs := checkPatch(patch); len(errs) > 0 {
		return nil, errs[0]
	}
	orig, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, data, corev1.Pod{})
	if err != nil {
		return nil, &PatchError{Msg: err.Error(), Hint: "a strategic merge patch of a Pod, as kubectl patch --type=strategic takes"}
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, &PatchError{Msg: err.Error(), Hint: "write each field with the type the Pod API gives it"}
	}
	if err := owned(pod, out); err != nil {
		return nil, err
	}
	return out, nil
}

// owned refuses a patch that changes what rdmabench relies on: the pod's
// name, namespace, owner and labels, the tools container's image and
// command (the tools run beside that command through exec).
func owned(before, after *corev1.Pod) error {
	switch {
	case after.Name != before.Name:
		return &PatchError{Path: "metadata.name", Msg: "the pod's name is rdmabench's", Hint: "remove it: pods are named rdmabench-<run>-<endpoint>"}
	case after.Namespace != before.Namespace:
		return &PatchError{Path: "metadata.namespace", Msg: "the namespace is cluster.namespace (or -n)", Hint: "remove it from the patch"}
	case !slices.EqualFunc(after.OwnerReferences, before.OwnerReferences, func(a, b metav1.OwnerReference) bool { return a.UID == b.UID && a.Name == b.Name }):
		return &PatchError{Path: "metadata.ownerReferences", Msg: "the run's ConfigMap owns every pod", Hint: "remove it from the patch"}
	case after.Spec.HostNetwork != before.Spec.HostNetwork:
		// The etcd's pod, its port and NetworkPolicy, the DNS policy and
		// the network the report names follow cluster.hostNetwork: a
		// patched pod alone on the host network would be kept from its
		// etcd by that policy (it then comes from the node's address).
		return &PatchError{Path: "spec.hostNetwork", Msg: "the pods' network is cluster.hostNetwork", Hint: "set cluster.hostNetwork instead: the run's etcd, its NetworkPolicy and the DNS policy follow it"}
	}
	for k, v := range before.Labels {
		if after.Labels[k] != v {
			return &PatchError{Path: "metadata.labels", Msg: fmt.Sprintf("label %s is rdmabench's", k), Hint: "use cluster.labels for labels of your own"}
		}
	}
	bt, at := toolsContainer(before), toolsContainer(after)
	switch {
	case at == nil:
		return &PatchError{Path: "spec.containers", Msg: "the patch removes the container \"tools\"", Hint: "patch containers by name; another name adds a sidecar"}
	case at.Image != bt.Image:
		return &PatchError{Path: "spec.containers", Msg: "the tools container's image is cluster.image", Hint: "set cluster.image instead"}
	case !slices.Equal(at.Command, bt.Command) || !slices.Equal(at.Args, bt.Args):
		return &PatchError{Path: "spec.containers", Msg: "the tools container's command is rdmabench's (the tools run beside it through exec)", Hint: "remove command and args of container \"tools\" from the patch"}
	}
	return nil
}

func toolsContainer(p *corev1.Pod) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == container {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// CheckScenario checks, before anything runs, what the scenario loader
// cannot without the Kubernetes API types: cluster.podPatch against the
// Pod API (strictly), applied to every endpoint's pod. Every problem is a
// scenarios.FieldError at its place in the file (exit 2).
func CheckScenario(sc *scenarios.Scenario, eps []endpoint.Endpoint) scenarios.ErrorList {
	if sc == nil || sc.Cluster == nil || sc.Cluster.PodPatch == nil {
		return nil
	}
	var list scenarios.ErrorList
	add := func(e *PatchError) {
		path := "cluster.podPatch"
		if e.Path != "" {
			path += "." + e.Path
		}
		pos := sc.Positions.Value(path)
		if e.AtKey {
			pos = sc.Positions.Key(path)
		}
		list = append(list, &scenarios.FieldError{File: sc.File, Line: pos.Line, Col: pos.Col, Path: path, Message: e.Msg, Hint: e.Hint})
	}
	if errs := checkPatch(sc.Cluster.PodPatch); len(errs) > 0 {
		for _, e := range errs {
			add(e)
		}
		return list
	}
	b := &Backend{opts: Options{RunID: "check"}, sc: sc, namespace: sc.Cluster.Namespace}
	for _, ep := range eps {
		if _, err := b.podFor(ep, nil); err != nil {
			if pe, ok := err.(*PatchError); ok {
				add(pe)
				return list
			}
		}
	}
	return list
}
