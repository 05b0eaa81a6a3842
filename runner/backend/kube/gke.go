package kube

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// GKE multi-network: pods ask for interfaces on GKE Network objects with
// annotations (networking.gke.io/interfaces, default-interface), and GKE
// reports each extra network's address in networking.gke.io/pod-ips; no
// Multus, no NetworkAttachmentDefinitions (GoogleCloudPlatform/
// gke-networking-api, apis/network/v1).
const (
	GKEInterfacesAnnotation       = "networking.gke.io/interfaces"
	GKEDefaultInterfaceAnnotation = "networking.gke.io/default-interface"
	GKEPodIPsAnnotation           = "networking.gke.io/pod-ips"
)

// gkeInterface is one entry of networking.gke.io/interfaces.
type gkeInterface struct {
	InterfaceName string `json:"interfaceName"`
	Network       string `json:"network"`
}

// gkePodIP is one entry of networking.gke.io/pod-ips.
type gkePodIP struct {
	NetworkName string `json:"networkName"`
	IP          string `json:"ip"`
}

// gkeInterfaces are a pod's interfaces on GKE: eth0 on the default
// network, then one per scenario network in order (eth1, eth2 …, or the
// name given as "network@interface"). A GKE Network is cluster-scoped: a
// "namespace/" prefix is dropped.
func gkeInterfaces(nets []string) []gkeInterface {
	out := []gkeInterface{{InterfaceName: "eth0", Network: "default"}}
	for i, n := range nets {
		name, iface := splitNetwork(n)
		name = name[strings.LastIndexByte(name, '/')+1:]
		if iface == "" {
			iface = fmt.Sprintf("eth%d", i+1)
		}
		out = append(out, gkeInterface{InterfaceName: iface, Network: name})
	}
	return out
}

// networkAnnotations asks for the secondary networks the platform's way:
// Multus' k8s.v1.cni.cncf.io/networks, or GKE's interfaces annotation.
func (b *Backend) networkAnnotations(annotations map[string]string, nets []string) {
	if len(nets) == 0 {
		return
	}
	if b.plat != PlatformGKE {
		annotations[NetworksAnnotation] = strings.Join(nets, ",")
		return
	}
	data, _ := json.Marshal(gkeInterfaces(nets))
	annotations[GKEInterfacesAnnotation] = string(data)
	annotations[GKEDefaultInterfaceAnnotation] = "eth0"
}

// dataAttachment is the pod's interface on its data network: from
// Multus' network-status, or on GKE from the pod-ips annotation and the
// interface the pod asked for.
func (b *Backend) dataAttachment(pod *corev1.Pod, network string) (attachment, error) {
	if b.plat != PlatformGKE {
		return dataAttachment(pod, network)
	}
	want := gkeInterfaces([]string{network})[1]
	if iface, ok := podGKEInterface(pod, want.Network); ok {
		want.InterfaceName = iface
	}
	raw := pod.Annotations[GKEPodIPsAnnotation]
	if strings.TrimSpace(raw) == "" {
		return attachment{}, fmt.Errorf("no %s annotation: GKE attached no network %s (is multi-networking enabled on node %s's pool, and the Network defined?)",
			GKEPodIPsAnnotation, want.Network, pod.Spec.NodeName)
	}
	var ips []gkePodIP
	if err := json.Unmarshal([]byte(raw), &ips); err != nil {
		return attachment{}, fmt.Errorf("%s annotation is not JSON: %v", GKEPodIPsAnnotation, err)
	}
	var have []string
	for _, ip := range ips {
		if ip.NetworkName == want.Network && ip.IP != "" {
			return attachment{Network: want.Network, Interface: want.InterfaceName, IP: ip.IP}, nil
		}
		have = append(have, ip.NetworkName)
	}
	return attachment{}, fmt.Errorf("network %s is not among the pod's networks in %s (%s)", want.Network, GKEPodIPsAnnotation, strings.Join(have, ", "))
}

// podGKEInterface is the interface the pod's own interfaces annotation
// gives a network (as created: rdmabench's numbering, a pod patch's, or
// Google's layout with eth1 on gvnic-1 and the RDMA networks on
// eth2…eth9), so that a pod's second network is not taken for eth1.
func podGKEInterface(pod *corev1.Pod, network string) (string, bool) {
	var ifs []gkeInterface
	if json.Unmarshal([]byte(pod.Annotations[GKEInterfacesAnnotation]), &ifs) != nil {
		return "", false
	}
	for _, i := range ifs {
		if i.Network == network && i.InterfaceName != "" {
			return i.InterfaceName, true
		}
	}
	return "", false
}
