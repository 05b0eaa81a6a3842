package kube

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// draAttachment is the network interface a DRA driver attached to the pod
// (DraNet and others publish it in the ResourceClaim's status, the
// networkData of KEP-4817: interface name and IPs in CIDR form), for a pod
// on no Multus or GKE network: its address then is that interface's, not
// the pod IP. The first claim device with an address wins; none (a GPU
// claim, a driver that publishes nothing, a claim we may not read) leaves
// the pod network.
func (b *Backend) draAttachment(ctx context.Context, pod *corev1.Pod) (attachment, bool) {
	for _, name := range podClaimNames(pod) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		claim, err := b.client.ResourceV1().ResourceClaims(pod.Namespace).Get(cctx, name, metav1.GetOptions{})
		cancel()
		if err != nil {
			continue
		}
		for _, d := range claim.Status.Devices {
			nd := d.NetworkData
			if nd == nil || len(nd.IPs) == 0 {
				continue
			}
			ip, _, _ := strings.Cut(nd.IPs[0], "/")
			return attachment{Network: "resource claim " + name + " (" + d.Driver + " " + d.Device + ")",
				Interface: nd.InterfaceName, IP: ip}, true
		}
	}
	return attachment{}, false
}

// podClaimNames are the ResourceClaims a pod holds: those it names, and
// those made for it from templates (its status says their names).
func podClaimNames(pod *corev1.Pod) []string {
	var out []string
	for _, c := range pod.Spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			out = append(out, *c.ResourceClaimName)
		}
	}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			out = append(out, *s.ResourceClaimName)
		}
	}
	return out
}
