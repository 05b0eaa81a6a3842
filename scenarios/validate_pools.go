package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// poolNames lists the pools in file order, for hints.
func (v *validator) poolNames() []string {
	names := make([]string, 0, len(v.s.Pools))
	for _, p := range v.s.Pools {
		names = append(names, p.Name)
	}
	return names
}

// pool finds a pool by name.
func (v *validator) pool(name string) *Pool {
	for i := range v.s.Pools {
		if v.s.Pools[i].Name == name {
			return &v.s.Pools[i]
		}
	}
	return nil
}

func (v *validator) pools() {
	if len(v.s.Pools) == 0 {
		v.errf("pools", "add at least one pool: pools: [{name: a, replicas: 2}]", "no pools are defined")
		return
	}
	seen := map[string]bool{}
	for i := range v.s.Pools {
		p := &v.s.Pools[i]
		path := fmt.Sprintf("pools[%d]", i)
		if v.checkLabel(path+".name", p.Name, "pool") && seen[p.Name] {
			v.errf(path+".name", "pool names must be unique", "pool %q is defined twice", p.Name)
		}
		seen[p.Name] = true
		v.onePool(path, p)
	}
}

func (v *validator) onePool(path string, p *Pool) {
	if n := p.ReplicaCount(); n < 1 {
		v.errf(path+".replicas", "a pool needs at least 1 replica", "must be at least 1, not %d", n)
	} else if n > 4096 {
		v.errf(path+".replicas", "split the scenario; at most 4096 endpoints per pool", "%d replicas is too many", n)
	}
	if err := p.GPUs.Parse(); err != nil {
		v.errf(path+".gpus", "write the GPUs per endpoint as a count of 0 or more, or all (every GPU of the host)", "%v", err)
	} else if p.GPUs.All && v.s.Backend != BackendLocal {
		v.errf(path+".gpus", "write the count of GPUs per endpoint (a pod requests a number of them)",
			"all counts the GPUs of the host rdmabench runs on: backend local only, not %s", v.s.Backend)
	} else {
		v.gpusAgree(path, p)
	}
	for j, a := range p.AvoidPools {
		ap := fmt.Sprintf("%s.avoidPools[%d]", path, j)
		if v.pool(a) == nil {
			v.errf(ap, suggest(a, "pools", v.poolNames()), "unknown pool %q", a)
		}
	}
	for j, a := range p.ShareNodesWith {
		ap := fmt.Sprintf("%s.shareNodesWith[%d]", path, j)
		switch {
		case v.pool(a) == nil:
			v.errf(ap, suggest(a, "pools", v.poolNames()), "unknown pool %q", a)
		case contains(p.AvoidPools, a):
			v.errf(ap, "a pool cannot both avoid and share nodes with another: remove it from one list", "pool %q is also in avoidPools", a)
		}
	}
	v.checkStrings(path+".devices", p.Devices, "an RDMA device name such as mlx5_0")
	v.cpuSets(path, p)
	v.checkEnv(path+".env", p.Env)
	v.poolBackendFields(path, p)
}

// poolBackendFields checks the pool fields that only one backend reads.
func (v *validator) poolBackendFields(path string, p *Pool) {
	b := v.s.Backend
	if b != BackendKube {
		for _, f := range []string{"nodeSelector", "networks", "resources", "avoidPools", "tolerations", "shareNodesWith", "perNode",
			"cpu", "memory", "shmSize", "hugepages", "resourceClaims", "images"} {
			if v.written(path+"."+f, p, f) {
				v.keyErrf(path+"."+f, "it applies to backend: kube only; remove it", "%s means nothing for the %s backend", f, b)
			}
		}
	} else {
		v.checkStrings(path+".networks", p.Networks, "a NetworkAttachmentDefinition name")
		v.checkResources(path+".resources", p.Resources)
		v.noImages(path+".images", p)
		v.checkTolerations(path+".tolerations", p.Tolerations)
		v.perNode(path, p)
		if c := v.s.Cluster; c != nil {
			v.podResources(path, p.CPU, p.Memory, p.ShmSize, p.Hugepages, c.Memory, c.ShmSize)
			taken := map[string]bool{}
			for _, rc := range c.ResourceClaims {
				taken[rc.Name] = true
			}
			v.resourceClaims(path+".resourceClaims", p.ResourceClaims, taken)
		}
	}
	if b != BackendSSH {
		if v.written(path+".hosts", p, "hosts") {
			v.keyErrf(path+".hosts", "hosts apply to backend: ssh only; remove it", "hosts mean nothing for the %s backend", b)
		}
		return
	}
	if len(p.Hosts) == 0 {
		v.errf(path, "list the hosts its replicas run on: hosts: ["+firstOr(v.hostNames(), "node1")+"]", "pool %q has no hosts (the ssh backend needs them)", p.Name)
	}
	for j, h := range p.Hosts {
		if !contains(v.hostNames(), h) && !v.undecoded("hosts") {
			v.errf(fmt.Sprintf("%s.hosts[%d]", path, j), suggest(h, "hosts", v.hostNames()), "unknown host %q", h)
		}
	}
}

func firstOr(list []string, def string) string {
	if len(list) > 0 && list[0] != "" {
		return list[0]
	}
	return def
}

// perNode checks a pool's endpoints per node: at least 1, no more than its
// replicas, and networks a node's endpoints can share (one) or split
// evenly (a multiple of perNode).
func (v *validator) perNode(path string, p *Pool) {
	if p.PerNode == nil {
		return
	}
	n, replicas := *p.PerNode, p.ReplicaCount()
	nets := len(p.Networks)
	if c := v.s.Cluster; nets == 0 && c != nil && !c.HostNetwork {
		nets = len(c.Networks)
	}
	switch {
	case n < 1:
		v.errf(path+".perNode", "write how many of the pool's endpoints share a node (1: one per node, the default)", "must be at least 1, not %d", n)
	case n > replicas:
		v.errf(path+".perNode", fmt.Sprintf("lower perNode to %d at most, or raise replicas", replicas),
			"%d endpoints per node is more than the pool's %d replica(s)", n, replicas)
	case nets > 1 && nets%n != 0:
		v.errf(path+".perNode", fmt.Sprintf("list one network (each pod attaches it) or a multiple of %d (each pod of a node gets its share, its own rails)", n),
			"the pool's %d networks do not split evenly among %d endpoints of a node", nets, n)
	}
}

// gpusAgree checks a pool's gpus against a GPU resource its pods request
// by name (cluster.resources, the pool's on top): the resource is what a
// pod gets, so a gpus of another count would run the wrong number of
// ranks on it.
func (v *validator) gpusAgree(path string, p *Pool) {
	if p.GPUs.N <= 0 {
		return
	}
	resources := map[string]string{}
	from := map[string]string{}
	if c := v.s.Cluster; c != nil {
		for k, q := range c.Resources {
			resources[k], from[k] = q, "cluster.resources"
		}
	}
	for k, q := range p.Resources {
		resources[k], from[k] = q, path+".resources"
	}
	for _, k := range slices.Sorted(maps.Keys(resources)) {
		n, err := strconv.Atoi(strings.TrimSpace(resources[k]))
		if !IsGPUResource(k) || err != nil || n == p.GPUs.N {
			continue
		}
		v.errf(path+".gpus", fmt.Sprintf("write the same count in both (gpus: %d, or %s: %q), or leave gpus out: the resource is what each pod gets", n, k, strconv.Itoa(p.GPUs.N)),
			"gpus is %d but each pod requests %s: %q (%s)", p.GPUs.N, k, resources[k], from[k])
		return
	}
}

// cpuSets checks a pool's cpusets: CPU lists as Linux writes them ("0-3,8"),
// on the local backend only (a pod's CPUs are the kubelet's; an ssh host's
// processes are not pinned).
func (v *validator) cpuSets(path string, p *Pool) {
	if len(p.CPUSets) == 0 {
		return
	}
	if v.s.Backend != BackendLocal {
		v.keyErrf(path+".cpusets", "remove it: on kube give the pod whole CPUs (cpu: \"4\" with the kubelet's static CPU manager)",
			"cpusets applies to backend: local only, not %s", v.s.Backend)
		return
	}
	for i, c := range p.CPUSets {
		if _, err := ParseCPUList(c); err != nil {
			v.errf(fmt.Sprintf("%s.cpusets[%d]", path, i), "write CPUs as Linux lists them, e.g. 8-9 or 0,2,4-7", "%v", err)
		}
	}
}

// ParseCPUList reads a Linux CPU list ("0-3,8,10-11") into CPU numbers.
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%q names no CPU", s)
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b > 4095 {
			if part == s {
				return nil, fmt.Errorf("%q is not a CPU or a range of CPUs (0-4095, low-high)", s)
			}
			return nil, fmt.Errorf("%q: %q is not a CPU or a range of CPUs (0-4095, low-high)", s, part)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
