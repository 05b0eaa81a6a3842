package parsers

import "sort"

// PerftestTransport is the transport evidence in a perftest measurement's
// header: perftest moves data only through RDMA verbs, and prints its
// header (device, transport and link type, GID) only once its queue pairs
// are connected, so a run with results is evidence of RDMA — RoCE when the
// link type is Ethernet, InfiniBand otherwise. It returns nil when the
// header is missing (a failed run, or --output=… bare numbers).
// Parsers leave Transport unset for perftest; the runner fills it from here.
func PerftestTransport(m Measurement) *Transport {
	dev, tt := m.Info["device"], m.Info["transport_type"]
	if !m.OK || dev == "" || tt == "" {
		return nil
	}
	detail := "InfiniBand"
	if m.Info["link_type"] == "Ethernet" {
		detail = "RoCE"
	}
	if c := m.Info["connection_type"]; c != "" {
		detail += " " + c
	}
	t := &Transport{Kind: TransportRDMA, Source: "perftest", Detail: detail, Devices: []string{dev}}
	keys := []string{"device", "transport_type", "link_type", "gid_index", "connection_type"}
	names := map[string]string{"device": "Device", "transport_type": "Transport type", "link_type": "Link type",
		"gid_index": "GID index", "connection_type": "Connection type"}
	sort.Strings(keys)
	for _, k := range keys {
		if v := m.Info[k]; v != "" {
			t.Evidence = append(t.Evidence, names[k]+" : "+v)
		}
	}
	return t
}
