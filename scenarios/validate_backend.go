package scenarios

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// backend checks the backend name and the sections that belong to it:
// ssh needs hosts, kube needs a cluster with an image, and neither section
// may be given to a backend that would silently ignore it.
func (v *validator) backend() {
	s := v.s
	if !v.checkOneOf("backend", s.Backend, "backends", Backends) {
		return
	}
	if s.Backend != BackendKube && v.written("cluster", s, "cluster") {
		v.keyErrf("cluster", "cluster settings apply to backend: kube; set that, or remove the section",
			"cluster means nothing for the %s backend", s.Backend)
	}
	if s.Backend != BackendSSH && v.written("hosts", s, "hosts") {
		v.keyErrf("hosts", "hosts apply to backend: ssh; set that, or remove the section",
			"hosts mean nothing for the %s backend", s.Backend)
	}
	switch s.Backend {
	case BackendKube:
		v.cluster()
	case BackendSSH:
		v.hosts()
	}
}

var capability = regexp.MustCompile(`^[A-Z][A-Z_]*$`)

func (v *validator) cluster() {
	c := v.s.Cluster
	if c == nil {
		v.errf("cluster", "add a cluster section with at least image: (the image with the tools)", "the kube backend needs a cluster section")
		return
	}
	if strings.TrimSpace(c.Image) == "" {
		v.errf("cluster.image", "name the image every pod runs: your serving image (with cluster.toolsImage: rdmabench's tools image), or the tools image itself for CPU-only tests (make image), e.g. image: quay.io/you/rdmabench-tools:latest",
			"the kube backend needs cluster.image")
	}
	if !dnsLabel.MatchString(c.Namespace) || len(c.Namespace) > 63 {
		v.errf("cluster.namespace", "use lowercase letters, digits and '-'", "%q is not a valid namespace", c.Namespace)
	}
	if strings.TrimSpace(c.AntiAffinity) == "" {
		v.errf("cluster.antiAffinity", "a node label key such as kubernetes.io/hostname", "antiAffinity is empty")
	}
	for i, cp := range c.Capabilities {
		if !capability.MatchString(strings.TrimPrefix(cp, "CAP_")) {
			v.errf(fmt.Sprintf("cluster.capabilities[%d]", i), "capabilities are like IPC_LOCK, SYS_RESOURCE, NET_RAW", "%q is not a capability name", cp)
		}
	}
	v.noImages("cluster.images", c)
	v.checkStrings("cluster.networks", c.Networks, "a NetworkAttachmentDefinition name, \"name\" or \"namespace/name\"")
	v.checkResources("cluster.resources", c.Resources)
	if c.StartupTimeout.IsSet() {
		v.checkDuration("cluster.startupTimeout", &c.StartupTimeout)
	}
	if c.FailFastWindow.IsSet() {
		v.checkDuration("cluster.failFastWindow", &c.FailFastWindow)
	}
	v.podResources("cluster", c.CPU, c.Memory, c.ShmSize, c.Hugepages, "", "")
	v.resourceClaims("cluster.resourceClaims", c.ResourceClaims, map[string]bool{})
	v.podPatch(c)
	v.podFields(c)
}

// checkStrings reports empty items of a list of names.
func (v *validator) checkStrings(path string, list []string, what string) {
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			v.errf(fmt.Sprintf("%s[%d]", path, i), "write "+what, "item is empty")
		}
	}
}

func (v *validator) checkResources(path string, res map[string]string) {
	for k, q := range res {
		if strings.TrimSpace(q) == "" {
			v.errf(joinPath(path, k), "write a quantity such as \"1\" or \"8\"", "resource %q has no quantity", k)
		}
	}
}

func (v *validator) hosts() {
	hosts := v.s.Hosts
	if len(hosts) == 0 {
		v.errf("hosts", "list the machines: hosts: [{name: node1, address: 10.0.0.1}]", "the ssh backend needs hosts")
		return
	}
	seen := map[string]bool{}
	for i, h := range hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		if h.Name == "" {
			v.errf(p+".name", "give each host a name that pools refer to", "host name is missing")
		} else if seen[h.Name] {
			v.errf(p+".name", "host names must be unique", "host %q is defined twice", h.Name)
		}
		seen[h.Name] = true
		if strings.TrimSpace(h.Address) == "" {
			v.errf(p+".address", "the address ssh connects to, e.g. 10.0.0.1 or node1.example.com", "host address is missing")
		}
		if h.Port < 0 || h.Port > 65535 {
			v.errf(p+".port", "ports are 1–65535; leave it out for 22", "port %d is out of range", h.Port)
		}
		v.hostRails(p, h)
	}
}

// hostRails: each rail is an IP address of the host's other NICs, none
// twice and none the data address (rail 0).
func (v *validator) hostRails(p string, h Host) {
	seen := map[string]bool{}
	for j, a := range h.Rails {
		path := fmt.Sprintf("%s.rails[%d]", p, j)
		switch {
		case !validIP(a):
			v.errf(path, "a rail is the IP address of one of the host's other NICs, e.g. 10.9.1.1", "rail %q is not an IP address", a)
		case a == h.DataAddress:
			v.errf(path, "dataAddress is rail 0; rails lists the other NICs' addresses", "rail %s is the data address", a)
		case seen[a]:
			v.errf(path, "each rail is another NIC's address; dataAddress is rail 0", "rail %s is listed twice", a)
		}
		seen[a] = true
	}
}

// hostNames lists the names of the ssh hosts, for hints.
func (v *validator) hostNames() []string {
	names := make([]string, 0, len(v.s.Hosts))
	for _, h := range v.s.Hosts {
		names = append(names, h.Name)
	}
	return names
}

// validIP: an IPv4 or IPv6 address (net/netip: the loader stays free of
// package net, as the planner and the judge that read it must).
func validIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
