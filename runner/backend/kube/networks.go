package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// nadGroupVersion is Multus' NetworkAttachmentDefinition API.
const nadGroupVersion = "k8s.cni.cncf.io/v1"

// checkNetworks makes sure every secondary network the endpoints attach
// exists as a NetworkAttachmentDefinition before any pod is created, so a
// typo fails in a second with the networks that do exist instead of pods
// stuck in ContainerCreating.
func (b *Backend) checkNetworks(ctx context.Context, eps []endpoint.Endpoint) error {
	wanted := map[string]bool{}
	for _, ep := range eps {
		for _, n := range placementOf(ep).Networks {
			n, _ = splitNetwork(n)
			wanted[n] = true
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	if b.plat == PlatformGKE {
		return b.checkGKENetworks(ctx, sortedKeys(wanted))
	}
	if _, err := b.client.Discovery().ServerResourcesForGroupVersion(nadGroupVersion); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("kube: the scenario names secondary networks (%s) but the cluster has no %s API: Multus is not installed (install it, or remove networks to test over the pod network)",
				strings.Join(sortedKeys(wanted), ", "), nadGroupVersion)
		}
		return nil // discovery refused (RBAC): let the pods tell
	}
	for _, n := range sortedKeys(wanted) {
		ns, name := b.namespace, n
		if i := strings.IndexByte(n, '/'); i >= 0 {
			ns, name = n[:i], n[i+1:]
		}
		raw, err := b.client.Discovery().RESTClient().Get().
			AbsPath("/apis", nadGroupVersion, "namespaces", ns, "network-attachment-definitions", name).
			DoRaw(ctx)
		switch {
		case err == nil:
			b.noteNADResource(n, raw)
		case apierrors.IsNotFound(err):
			return fmt.Errorf("kube: NetworkAttachmentDefinition %s/%s does not exist%s", ns, name, b.existingNADs(ctx, ns))
		case apierrors.IsForbidden(err):
			return nil // may not read them: the pods will tell
		default:
			return fmt.Errorf("kube: reading NetworkAttachmentDefinition %s/%s: %w", ns, name, err)
		}
	}
	return nil
}

// existingNADs lists the namespace's networks, for the error's hint.
func (b *Backend) existingNADs(ctx context.Context, ns string) string {
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	raw, err := b.client.Discovery().RESTClient().Get().
		AbsPath("/apis", nadGroupVersion, "namespaces", ns, "network-attachment-definitions").DoRaw(ctx)
	if err != nil || jsonUnmarshal(raw, &list) != nil {
		return ""
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Metadata.Name)
	}
	if len(names) == 0 {
		return fmt.Sprintf(" (namespace %s has none: create it, or fix cluster.networks)", ns)
	}
	sort.Strings(names)
	return fmt.Sprintf(" (namespace %s has: %s)", ns, strings.Join(names, ", "))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// gkeNetworkGroupVersion serves GKE's Network objects (cluster-scoped).
const gkeNetworkGroupVersion = "networking.gke.io/v1"

// checkGKENetworks makes sure each network the pods ask for exists as a
// GKE Network, so that a typo fails at once with the networks that exist.
func (b *Backend) checkGKENetworks(ctx context.Context, wanted []string) error {
	if _, err := b.client.Discovery().ServerResourcesForGroupVersion(gkeNetworkGroupVersion); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("kube: the scenario names networks (%s) but the cluster serves no %s API: enable multi-networking on the GKE cluster (--enable-multi-networking), or remove networks",
				strings.Join(wanted, ", "), gkeNetworkGroupVersion)
		}
		return nil
	}
	for _, n := range wanted {
		name := n[strings.LastIndexByte(n, '/')+1:]
		err := b.client.Discovery().RESTClient().Get().AbsPath("/apis", gkeNetworkGroupVersion, "networks", name).Do(ctx).Error()
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			return fmt.Errorf("kube: GKE Network %s does not exist (kubectl get networks.networking.gke.io lists them)", name)
		case apierrors.IsForbidden(err):
			return nil // may not read them: the pods will tell
		default:
			return fmt.Errorf("kube: reading GKE Network %s: %w", name, err)
		}
	}
	return nil
}
