package kube

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// NADResourceAnnotation is where a NetworkAttachmentDefinition names the
// device plugin resource its attachments draw a device from (an SR-IOV
// pool: openshift.io/mlx5_rail0), as the SR-IOV network operator writes it.
const NADResourceAnnotation = "k8s.v1.cni.cncf.io/resourceName"

// noteNADResource keeps the resource a network's definition (raw JSON)
// names, for requestNetworkResources.
func (b *Backend) noteNADResource(network string, raw []byte) {
	var nad struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if jsonUnmarshal(raw, &nad) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nadResources == nil {
		b.nadResources = map[string]string{}
	}
	b.nadResources[network] = nad.Metadata.Annotations[NADResourceAnnotation]
}

// networkResources counts, per resource, the devices a pod's networks
// draw (one per attachment whose definition names a resource), leaving
// out those the scenario requests itself (its value stands).
func networkResources(nets []string, byNAD, asked map[string]string) map[string]int {
	out := map[string]int{}
	for _, n := range nets {
		r := byNAD[n]
		if _, own := asked[r]; r == "" || own {
			continue
		}
		out[r]++
	}
	return out
}

// requestNetworkResources has each pod's container request and be limited
// to a device of every network it attaches that draws from a device
// plugin resource, as Multus' network resources injector adds where it
// runs: a pod of a node with perNode attaches its own rail and requests
// that rail's VF, not every rail's. Pods built without a cluster (plan -o
// manifests) are left as they are.
func (b *Backend) requestNetworkResources(pods []*corev1.Pod, eps []endpoint.Endpoint) {
	b.mu.Lock()
	byNAD := maps.Clone(b.nadResources)
	b.mu.Unlock()
	for i, pod := range pods {
		p := placementOf(eps[i])
		extra := networkResources(p.Networks, byNAD, p.Resources)
		for ci := range pod.Spec.Containers {
			c := &pod.Spec.Containers[ci]
			if c.Name != container || len(extra) == 0 {
				continue
			}
			if c.Resources.Limits == nil {
				c.Resources.Limits, c.Resources.Requests = corev1.ResourceList{}, corev1.ResourceList{}
			}
			for r, n := range extra {
				q := resource.MustParse(strconv.Itoa(n))
				c.Resources.Limits[corev1.ResourceName(r)], c.Resources.Requests[corev1.ResourceName(r)] = q, q
			}
		}
	}
}
