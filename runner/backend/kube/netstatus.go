package kube

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// networkStatus is one entry of Multus' network-status annotation (the
// Network Plumbing Working Group's format).
type networkStatus struct {
	Name       string      `json:"name"`
	Interface  string      `json:"interface"`
	IPs        []string    `json:"ips"`
	Default    bool        `json:"default"`
	DeviceInfo *deviceInfo `json:"device-info,omitempty"`
}

// deviceInfo is the device an SR-IOV (or host-device) CNI gave the pod
// for a network, as Multus reports it (the Network Plumbing Working
// Group's Device Information spec): for a PCI device its address and, for
// an RDMA-capable one, its RDMA device.
type deviceInfo struct {
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
	PCI     *struct {
		PCIAddress   string `json:"pci-address,omitempty"`
		RDMADevice   string `json:"rdma-device,omitempty"`
		PFPCIAddress string `json:"pf-pci-address,omitempty"`
	} `json:"pci,omitempty"`
}

// attachment is the secondary interface a pod's tools use, with the
// device behind it when its CNI says.
type attachment struct {
	Network, Interface, IP string
	RDMADevice, PCIAddress string
}

// dataAttachment finds the pod's interface on the named network (a
// "name" or "namespace/name" as the scenario wrote it) in network-status.
// Tests that asked for that network must not silently run over the pod
// network, so a missing entry is an error.
func dataAttachment(pod *corev1.Pod, network string) (attachment, error) {
	raw, ok := pod.Annotations[NetworkStatusAnnotation]
	if !ok || strings.TrimSpace(raw) == "" {
		return attachment{}, fmt.Errorf("no %s annotation: the secondary network %s was not attached (is Multus installed on node %s?)",
			NetworkStatusAnnotation, network, pod.Spec.NodeName)
	}
	var list []networkStatus
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return attachment{}, fmt.Errorf("%s annotation is not JSON: %v", NetworkStatusAnnotation, err)
	}
	want, iface := splitNetwork(network)
	network = want
	if !strings.Contains(want, "/") {
		want = pod.Namespace + "/" + want
	}
	var have []string
	for _, s := range list {
		have = append(have, s.Name)
		if s.Name != want && s.Name != network || iface != "" && s.Interface != iface {
			continue
		}
		if len(s.IPs) == 0 {
			return attachment{}, fmt.Errorf("network %s is attached as %s but has no IP address (does its NetworkAttachmentDefinition configure IPAM?)", want, s.Interface)
		}
		att := attachment{Network: s.Name, Interface: s.Interface, IP: s.IPs[0]}
		if di := s.DeviceInfo; di != nil && di.PCI != nil {
			att.RDMADevice, att.PCIAddress = di.PCI.RDMADevice, di.PCI.PCIAddress
		}
		return att, nil
	}
	return attachment{}, fmt.Errorf("network %s is not among the pod's attached networks (%s)", want, strings.Join(have, ", "))
}

// splitNetwork cuts Multus' "name@interface" form (also
// "namespace/name@interface") into the network and the interface asked for.
func splitNetwork(n string) (network, iface string) {
	network, iface, _ = strings.Cut(n, "@")
	return network, iface
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
