package agent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Multus annotation keys: the networks a pod asks for, and what it got.
const (
	NetworksAnnotation      = "k8s.v1.cni.cncf.io/networks"
	NetworkStatusAnnotation = "k8s.v1.cni.cncf.io/network-status"
)

// networkSelection is one element of the JSON form of the networks
// annotation.
type networkSelection struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Interface string `json:"interface,omitempty"`
}

// ParseNetworks reads the networks annotation in either of Multus' forms
// (a comma list "a, ns/b, c@if1" or a JSON list of selections) and returns
// "<namespace>/<name>" for each, defaulting the namespace to podNS.
func ParseNetworks(value, podNS string) ([]string, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	var out []string
	if strings.HasPrefix(value, "[") {
		var sel []networkSelection
		if err := json.Unmarshal([]byte(value), &sel); err != nil {
			return nil, fmt.Errorf("%s: %w", NetworksAnnotation, err)
		}
		for _, s := range sel {
			if s.Name == "" {
				return nil, fmt.Errorf("%s: an entry has no name", NetworksAnnotation)
			}
			ns := s.Namespace
			if ns == "" {
				ns = podNS
			}
			out = append(out, ns+"/"+s.Name)
		}
		return out, nil
	}
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		item, _, _ = strings.Cut(item, "@") // name@interface
		if !strings.Contains(item, "/") {
			item = podNS + "/" + item
		}
		out = append(out, item)
	}
	return out, nil
}

// networkStatus is one element of the network-status annotation as Multus
// publishes it (the Network Plumbing WG's de-facto standard).
type networkStatus struct {
	Name      string   `json:"name"`
	Interface string   `json:"interface,omitempty"`
	IPs       []string `json:"ips,omitempty"`
	MAC       string   `json:"mac,omitempty"`
	Default   bool     `json:"default,omitempty"`
	DNS       struct{} `json:"dns"`
	// DeviceInfo is what an SR-IOV CNI reports of the device behind it.
	DeviceInfo *DeviceInfo `json:"device-info,omitempty"`
}

// NetworkStatus renders the attachments as the network-status annotation:
// the default network first, then each secondary network in order.
func NetworkStatus(atts []Attachment) string {
	list := make([]networkStatus, 0, len(atts))
	for _, a := range atts {
		list = append(list, networkStatus{
			Name: a.Network, Interface: a.Interface, IPs: []string{a.IP.String()},
			MAC: a.MAC, Default: a.Default, DeviceInfo: a.DeviceInfo,
		})
	}
	b, _ := json.MarshalIndent(list, "", "    ")
	return string(b)
}
