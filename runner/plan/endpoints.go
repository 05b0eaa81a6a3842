package plan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// localAddress is the data address of every endpoint of the local backend.
const localAddress = "127.0.0.1"

// Endpoints are the endpoints Compile would plan for s, placement
// included, without the tests' jobs (a backend's own tests, manifests).
func Endpoints(s *scenarios.Scenario, opts CompileOptions) ([]endpoint.Endpoint, error) {
	eps, _, err := planEndpoints(s, opts)
	return eps, err
}

// planEndpoints expands the pools into endpoints named "<pool>-<i>", in pool
// order. poolIdx maps a pool name to the indices of its endpoints.
func planEndpoints(s *scenarios.Scenario, opts CompileOptions) ([]endpoint.Endpoint, map[string][]int, error) {
	var eps []endpoint.Endpoint
	poolIdx := make(map[string][]int, len(s.Pools))
	partners := testPartners(s)
	hosts := make(map[string]scenarios.Host, len(s.Hosts))
	for _, h := range s.Hosts {
		hosts[h.Name] = h
	}
	for pi := range s.Pools {
		pool := &s.Pools[pi]
		if _, dup := poolIdx[pool.Name]; dup {
			return nil, nil, posErr(s.File, pool.Pos, "pools[%d]: pool %q is defined twice; give each pool its own name", pi, pool.Name)
		}
		gpus, err := poolGPUs(s, pool, opts)
		if err != nil {
			return nil, nil, posErr(s.File, pool.GPUs.Pos, "pools[%d].gpus: %v", pi, err)
		}
		n := pool.ReplicaCount()
		idx := make([]int, 0, n)
		env := mergeEnv(s.Defaults.Env, pool.Env)
		place := placement(s, pool, partners) // shared by the pool's endpoints: read-only
		for i := 0; i < n; i++ {
			ep, err := newEndpoint(s, pool, i, env, hosts)
			if err != nil {
				return nil, nil, posErr(s.File, pool.Pos, "pools[%d] (%s): %v", pi, pool.Name, err)
			}
			ep.Placement = nodeShare(place, pool, i)
			ep.GPUs, ep.GPUsFrom = gpus.N, gpus.from
			if opts.ResolveDevice != nil && ep.Device == "" {
				ep.Device = opts.ResolveDevice(ep)
				ep.ResolveDevice = ep.ResolveDevice && ep.Device == ""
			}
			idx = append(idx, len(eps))
			eps = append(eps, ep)
		}
		poolIdx[pool.Name] = idx
	}
	if err := allGPUsAlone(s, eps); err != nil {
		return nil, nil, err
	}
	shareHostGPUs(s, eps, opts)
	return eps, poolIdx, nil
}

// allGPUsAlone: an endpoint given gpus: all has every GPU of the host, so
// no other endpoint there may have any (two ranks on one GPU).
func allGPUsAlone(s *scenarios.Scenario, eps []endpoint.Endpoint) error {
	total := 0
	for _, ep := range eps {
		total += ep.GPUs
	}
	for pi := range s.Pools {
		pool := &s.Pools[pi]
		if !pool.GPUs.All {
			continue
		}
		for _, ep := range eps {
			if ep.Pool == pool.Name && total > ep.GPUs {
				return posErr(s.File, pool.GPUs.Pos, "pools[%d].gpus: all gives %s every GPU of this host (%d GPU(s)), yet the scenario's endpoints use %d in all: "+
					"give gpus: all to one pool of one replica, or write counts that add up to %d at most", pi, ep.Name, ep.GPUs, total, ep.GPUs)
			}
		}
	}
	return nil
}

// shareHostGPUs gives each endpoint of the local backend GPUs of its own,
// in pool order (prefill-0 GPU 0, decode-0 GPU 1 …), where more than one
// endpoint has GPUs and they fit the host: the tools then each drive their
// endpoint's GPUs, so a KV transfer crosses from one GPU to another. Where
// they do not fit, the endpoints share GPU 0 up as before, and preflight's
// gpu-count check says so.
func shareHostGPUs(s *scenarios.Scenario, eps []endpoint.Endpoint, opts CompileOptions) {
	if backendOf(s) != scenarios.BackendLocal || opts.HostGPUs == nil {
		return
	}
	withGPUs, total := 0, 0
	for _, ep := range eps {
		if ep.GPUs > 0 {
			withGPUs++
			total += ep.GPUs
		}
	}
	if withGPUs < 2 {
		return
	}
	host, _ := opts.HostGPUs()
	if total > host {
		return
	}
	next := 0
	for i := range eps {
		if eps[i].GPUs > 0 {
			eps[i].VisibleGPUs = visibleGPUs(next, eps[i].GPUs, host)
			next += eps[i].GPUs
		}
	}
}

// visibleGPUs is CUDA_VISIBLE_DEVICES for n GPUs from first of a host's
// host GPUs: those first, then the others in order ("1,0,2,3").
func visibleGPUs(first, n, host int) string {
	order := make([]string, 0, host)
	for g := first; g < first+n; g++ {
		order = append(order, strconv.Itoa(g))
	}
	for g := range host {
		if g < first || g >= first+n {
			order = append(order, strconv.Itoa(g))
		}
	}
	return strings.Join(order, ",")
}

// gpuCount is a pool's GPUs per endpoint and, for gpus: all, how they
// were counted.
type gpuCount struct {
	N    int
	from string
}

// poolGPUs resolves gpus: all to the GPUs of this host (the local backend
// runs every endpoint here; validation refuses it on other backends).
func poolGPUs(s *scenarios.Scenario, pool *scenarios.Pool, opts CompileOptions) (gpuCount, error) {
	if !pool.GPUs.All {
		return gpuCount{N: pool.GPUs.N}, nil
	}
	if backendOf(s) != scenarios.BackendLocal {
		return gpuCount{}, fmt.Errorf("all counts this host's GPUs, for the local backend only; write the count of GPUs per endpoint")
	}
	if opts.HostGPUs == nil {
		return gpuCount{}, fmt.Errorf("all: this host's GPUs were not counted (the planner was given no counter); write the count")
	}
	n, source := opts.HostGPUs()
	return gpuCount{N: n, from: fmt.Sprintf("all: %d GPU(s) on this host (%s)", n, source)}, nil
}

func newEndpoint(s *scenarios.Scenario, pool *scenarios.Pool, i int, env map[string]string, hosts map[string]scenarios.Host) (endpoint.Endpoint, error) {
	ep := endpoint.Endpoint{
		Name:     pool.Name + "-" + strconv.Itoa(i),
		Pool:     pool.Name,
		Index:    i,
		Device:   s.Defaults.Device,
		GIDIndex: copyInt(s.Defaults.GIDIndex),
		GPUs:     pool.GPUs.N,
		Env:      env,
	}
	if len(pool.Devices) > 0 {
		ep.Device = pool.Devices[i%len(pool.Devices)]
	}
	if len(pool.CPUSets) > 0 {
		ep.CPUSet = pool.CPUSets[i%len(pool.CPUSets)]
	}
	if ep.Device == "auto" {
		ep.Device = "" // discovered by the runner (CompileOptions.ResolveDevice)
	}
	// On ssh hosts and in pods no device named means each endpoint's own,
	// chosen where it runs from its data interface: the tools get
	// placeholders the runner fills (tools.DevicePlaceholder).
	ep.ResolveDevice = ep.Device == "" && backendOf(s) != scenarios.BackendLocal
	switch backendOf(s) {
	case scenarios.BackendLocal:
		ep.Address = localAddress
	case scenarios.BackendSSH:
		if len(pool.Hosts) == 0 {
			return ep, fmt.Errorf("the ssh backend needs hosts: for every pool; list the hosts its replicas run on")
		}
		name := pool.Hosts[i%len(pool.Hosts)]
		h, ok := hosts[name]
		if !ok {
			return ep, fmt.Errorf("host %q is not defined under hosts", name)
		}
		ep.Host = h.Name
		ep.Address = h.DataAddress
		if ep.Address == "" {
			ep.Address = h.Address
		}
		ep.Rails = hostRails(ep.Address, h.Rails)
	default:
		ep.Address = tools.AddrPlaceholder(ep.Name) // the pod's secondary IP, known once it runs
	}
	return ep, nil
}

// hostRails are an ssh host's rails as the planner knows them: the data
// address (rail 0), then each of hosts[].rails; their devices are found
// where the host runs. nil for a host with one NIC.
func hostRails(data string, rails []string) []endpoint.Rail {
	if len(rails) == 0 {
		return nil
	}
	out := []endpoint.Rail{{Network: "dataAddress", Address: data}}
	for i, a := range rails {
		out = append(out, endpoint.Rail{Network: "rails[" + strconv.Itoa(i) + "]", Address: a})
	}
	return out
}

// copyInt gives each endpoint its own GID index, so that discovery can
// set one endpoint's without touching the others.
func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func backendOf(s *scenarios.Scenario) string {
	if s.Backend == "" {
		return scenarios.BackendLocal
	}
	return s.Backend
}

// mergeEnv layers maps (environments, selectors, resources), later ones
// winning; nil when all are empty.
func mergeEnv(layers ...map[string]string) map[string]string {
	n := 0
	for _, l := range layers {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	out := make(map[string]string, n)
	for _, l := range layers {
		maps.Copy(out, l)
	}
	return out
}

// placement resolves where a pool's pods may run and what they get, the
// pool's settings over the cluster's, so that the kube backend reads the
// endpoint alone. nil outside the kube backend.
func placement(s *scenarios.Scenario, pool *scenarios.Pool, partners map[string][]string) *endpoint.Placement {
	c := s.Cluster
	if c == nil || backendOf(s) != scenarios.BackendKube {
		return nil
	}
	p := &endpoint.Placement{
		NodeSelector: mergeEnv(c.NodeSelector, pool.NodeSelector),
		Resources:    mergeEnv(c.Resources, pool.Resources),
		AntiAffinity: c.AntiAffinity,
		Capabilities: capabilities(c.Capabilities),
		CPU:          or(pool.CPU, c.CPU),
		Memory:       or(pool.Memory, c.Memory),
		ShmSize:      or(pool.ShmSize, c.ShmSize),
		Hugepages:    c.Hugepages,
	}
	if pool.Hugepages != nil {
		p.Hugepages = pool.Hugepages
	}
	for _, rc := range append(slices.Clone(c.ResourceClaims), pool.ResourceClaims...) {
		p.ResourceClaims = append(p.ResourceClaims, endpoint.ResourceClaim{Name: rc.Name, ClaimName: rc.ResourceClaimName, TemplateName: rc.ResourceClaimTemplateName})
	}
	if pool.GPUs.N > 0 {
		if p.Resources == nil {
			p.Resources = map[string]string{}
		}
		// A GPU resource named (amd.com/gpu, a MIG slice) is the pod's
		// GPUs: nvidia.com/gpu beside it would ask for two kinds.
		if !slices.ContainsFunc(slices.Collect(maps.Keys(p.Resources)), scenarios.IsGPUResource) {
			p.Resources[scenarios.DefaultGPUResource] = strconv.Itoa(pool.GPUs.N)
		}
	}
	for _, t := range append(slices.Clone(c.Tolerations), pool.Tolerations...) {
		kt := endpoint.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
		if t.TolerationSeconds != nil {
			secs := int64(*t.TolerationSeconds)
			kt.Seconds = &secs
		}
		p.Tolerations = append(p.Tolerations, kt)
	}
	switch {
	case c.HostNetwork:
	case len(pool.Networks) > 0:
		p.Networks = slices.Clone(pool.Networks)
	default:
		p.Networks = slices.Clone(c.Networks)
	}
	if p.AntiAffinity != "" {
		p.AvoidPools = avoidPools(s, pool, partners)
	}
	return p
}

// nodeShare is the placement of a pool's i-th endpoint where the pool
// puts several on a node (perNode): its own copy naming its node group
// (replicas in groups of perNode, in order) and, where the pool has a
// multiple of perNode networks, the node's i-th endpoint's share of them,
// so that each pod of a node attaches rails of its own. The shared
// placement otherwise.
func nodeShare(place *endpoint.Placement, pool *scenarios.Pool, i int) *endpoint.Placement {
	n := pool.NodeShare()
	if place == nil || n < 2 {
		return place
	}
	own := *place
	own.PerNode = n
	own.NodeGroup = pool.Name + "-n" + strconv.Itoa(i/n)
	if k := len(place.Networks) / n; k > 0 && len(place.Networks)%n == 0 {
		slot := i % n
		own.Networks = slices.Clone(place.Networks[slot*k : slot*k+k])
	}
	return &own
}

// avoidPools are the pools whose pods this pool's must not share a
// topology domain (node) with: its own (replicas spread), those it names,
// and every pool it tests with (their traffic must cross the fabric),
// less the pools either side lets it share nodes with.
func avoidPools(s *scenarios.Scenario, pool *scenarios.Pool, partners map[string][]string) []string {
	shares := func(other string) bool {
		if slices.Contains(pool.ShareNodesWith, other) {
			return true
		}
		for i := range s.Pools {
			if s.Pools[i].Name == other {
				return slices.Contains(s.Pools[i].ShareNodesWith, pool.Name)
			}
		}
		return false
	}
	out := []string{pool.Name}
	for _, name := range append(slices.Clone(pool.AvoidPools), partners[pool.Name]...) {
		if !slices.Contains(out, name) && !shares(name) {
			out = append(out, name)
		}
	}
	return out
}

// testPartners are, for each pool, the other pools a test pairs it with
// (from and to, in pool order).
func testPartners(s *scenarios.Scenario) map[string][]string {
	pair := map[string]map[string]bool{}
	add := func(a, b string) {
		if pair[a] == nil {
			pair[a] = map[string]bool{}
		}
		pair[a][b] = true
	}
	for _, t := range s.Tests {
		to := t.To
		if to == "" || to == t.From {
			continue
		}
		add(t.From, to)
		add(to, t.From)
	}
	out := map[string][]string{}
	for _, p := range s.Pools {
		for _, q := range s.Pools {
			if pair[p.Name][q.Name] {
				out[p.Name] = append(out[p.Name], q.Name)
			}
		}
	}
	return out
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// capabilities are the cluster's, as the API spells them (no CAP_ prefix).
func capabilities(cs []string) []string {
	var out []string
	for _, cp := range cs {
		cp = strings.TrimPrefix(strings.ToUpper(cp), "CAP_")
		if !slices.Contains(out, cp) {
			out = append(out, cp)
		}
	}
	return out
}
