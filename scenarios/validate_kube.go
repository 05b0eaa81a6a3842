package scenarios

import (
	"fmt"
	"slices"
	"strings"
)

// Keys rdmabench writes on its own pods, which a scenario may not set.
const (
	reservedPrefix           = "rdmabench.io/"
	multusNetworksAnnotation = "k8s.v1.cni.cncf.io/networks"
)

// podFields checks the cluster fields copied into every pod spec. The API
// server would refuse a bad one only when the pods are created, after the
// run started; here it is reported with its position, with the rest.
func (v *validator) podFields(c *Cluster) {
	if v.written("cluster.platform", c, "platform") {
		v.checkOneOf("cluster.platform", c.Platform, "platforms", Platforms)
	}
	if v.written("cluster.imagePullPolicy", c, "imagePullPolicy") {
		v.checkOneOf("cluster.imagePullPolicy", c.ImagePullPolicy, "imagePullPolicy values", PullPolicies)
	}
	for i, name := range c.ImagePullSecrets {
		v.checkObjectName(fmt.Sprintf("cluster.imagePullSecrets[%d]", i), name, "Secret",
			"the name of a docker-registry Secret in the pods' namespace, e.g. regcred")
	}
	if v.written("cluster.runtimeClassName", c, "runtimeClassName") {
		v.checkObjectName("cluster.runtimeClassName", c.RuntimeClassName, "RuntimeClass",
			"a RuntimeClass name such as nvidia, or leave the key out for the node's default runtime")
	}
	if v.written("cluster.priorityClassName", c, "priorityClassName") {
		v.checkObjectName("cluster.priorityClassName", c.PriorityClassName, "PriorityClass",
			"a PriorityClass name, or leave the key out for the cluster's default priority")
	}
	v.checkTolerations("cluster.tolerations", c.Tolerations)
	v.checkPodLabels("cluster.labels", c.Labels)
	v.checkPodAnnotations("cluster.annotations", c.Annotations)
	v.hostNetworkNetworks(c)
}

// checkObjectName checks the name of a Kubernetes object (a DNS-1123
// subdomain) the pods refer to.
func (v *validator) checkObjectName(path, name, kind, what string) {
	switch {
	case name == "":
		v.errf(path, "write "+what, "%s name is empty", kind)
	case !isDNS1123Subdomain(name):
		v.errf(path, "Kubernetes object names are lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters",
			"%q is not a valid %s name", name, kind)
	}
}

// checkTolerations checks each toleration the way the API server would.
func (v *validator) checkTolerations(path string, list []Toleration) {
	for i := range list {
		v.checkToleration(fmt.Sprintf("%s[%d]", path, i), &list[i])
	}
}

func (v *validator) checkToleration(path string, t *Toleration) {
	if t.Key != "" {
		if why := qualifiedNameProblem(t.Key); why != "" {
			v.errf(path+".key", "write a taint key such as nvidia.com/gpu or dedicated",
				"%q is not a valid taint key: %s", t.Key, why)
		}
	}
	if t.Effect != "" {
		v.checkOneOf(path+".effect", t.Effect, "effects", TaintEffects)
	}
	v.checkTolerationSeconds(path, t)
	switch t.Operator {
	case "", "Equal":
		if t.Key == "" {
			op := "Equal"
			if t.Operator == "" {
				op = "Equal (the default)"
			}
			v.errf(path+".key", "write the taint's key, or operator: Exists without a key to tolerate every taint",
				"operator %s needs a key", op)
		}
		if why := labelValueProblem(t.Value); why != "" {
			v.errf(path+".value", "write the taint's value, such as true or prefill",
				"%q is not a valid taint value: %s", t.Value, why)
		}
	case "Exists":
		if t.Value != "" {
			v.errf(path+".value", "Exists matches any value of the key: remove value, or use operator: Equal",
				"operator Exists takes no value")
		}
	default:
		v.checkOneOf(path+".operator", t.Operator, "operators", TolerationOperators)
	}
}

// checkTolerationSeconds: the seconds bound how long a pod stays on a node
// after a NoExecute taint appears, and mean nothing for other effects.
func (v *validator) checkTolerationSeconds(path string, t *Toleration) {
	if t.TolerationSeconds == nil {
		return
	}
	p := path + ".tolerationSeconds"
	if n := *t.TolerationSeconds; n < 0 {
		v.errf(p, "seconds a pod stays after a NoExecute taint appears; 0 evicts it at once", "must be at least 0, not %d", n)
	}
	if t.Effect != "NoExecute" && (t.Effect == "" || slices.Contains(TaintEffects, t.Effect)) {
		v.errf(p, "it bounds how long a pod stays after a NoExecute taint appears: set effect: NoExecute, or remove it",
			"tolerationSeconds applies only to effect NoExecute")
	}
}

// checkPodLabels checks label keys (at the key) and values (at the value).
func (v *validator) checkPodLabels(path string, labels map[string]string) {
	for _, k := range sortedStringKeys(labels) {
		p := joinPath(path, k)
		if strings.HasPrefix(k, reservedPrefix) {
			v.keyErrf(p, "rdmabench labels its pods rdmabench.io/run, rdmabench.io/pool and rdmabench.io/endpoint; use a prefix of your own, e.g. example.com/",
				"the rdmabench.io/ prefix is reserved for rdmabench's own labels")
		} else if why := qualifiedNameProblem(k); why != "" {
			v.keyErrf(p, "write a key such as team or example.com/team",
				"%q is not a valid label key: %s", k, why)
		}
		if why := labelValueProblem(labels[k]); why != "" {
			v.errf(p, "a label value may also be empty; free text belongs in annotations",
				"%q is not a valid label value: %s", labels[k], why)
		}
	}
}

// checkPodAnnotations checks annotation keys; values are free text.
// Kubernetes reads annotation keys case-insensitively.
func (v *validator) checkPodAnnotations(path string, annotations map[string]string) {
	for _, k := range sortedStringKeys(annotations) {
		p, lower := joinPath(path, k), strings.ToLower(k)
		switch {
		case lower == multusNetworksAnnotation:
			v.keyErrf(p, "list the NetworkAttachmentDefinitions in cluster.networks or a pool's networks: rdmabench turns them into this annotation",
				"%s is written by rdmabench", multusNetworksAnnotation)
		case strings.HasPrefix(lower, reservedPrefix):
			v.keyErrf(p, "use a prefix of your own, e.g. example.com/",
				"the rdmabench.io/ prefix is reserved for rdmabench's own annotations")
		default:
			if why := qualifiedNameProblem(lower); why != "" {
				v.keyErrf(p, "write a key such as example.com/owner",
					"%q is not a valid annotation key: %s", k, why)
			}
		}
	}
}

// hostNetworkNetworks: Multus attaches no secondary network to a pod in the
// node's network namespace, so networks with hostNetwork would be ignored.
func (v *validator) hostNetworkNetworks(c *Cluster) {
	if !c.HostNetwork {
		return
	}
	const hint = "Multus attaches no secondary network to a host-network pod: drop networks, or hostNetwork"
	if len(c.Networks) > 0 {
		v.keyErrf("cluster.networks", hint, "networks cannot be attached with hostNetwork: true")
	}
	for i := range v.s.Pools {
		if len(v.s.Pools[i].Networks) > 0 {
			v.keyErrf(fmt.Sprintf("pools[%d].networks", i), hint, "networks cannot be attached with cluster.hostNetwork: true")
		}
	}
}

// sortedStringKeys gives a map's keys in order, so that a scenario built in
// code (whose problems have no position) gets them in a stable order.
func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
