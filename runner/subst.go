package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// substituter fills the placeholders of one leg repetition: the run's
// (etcd, run id, scratch folder) and each endpoint's (data address; RDMA
// device, port and GID index where they were chosen at run time).
type substituter struct {
	r *strings.Replacer
	// unknown are placeholders whose value is not known here (a GID on
	// InfiniBand, a device no endpoint resolved): a value holding one is
	// left out of the command, with its flag or variable.
	unknown []string
	eps     map[string]endpoint.Endpoint
}

func newSubstituter(eps map[string]endpoint.Endpoint, etcdURL, runID, out string) substituter {
	s := substituter{eps: eps}
	pairs := []string{tools.PlaceholderRun, runID, tools.PlaceholderOut, out}
	if etcdURL != "" {
		pairs = append(pairs, tools.PlaceholderEtcd, etcdURL)
	}
	add := func(placeholder, value string) {
		if value == "" {
			s.unknown = append(s.unknown, placeholder)
			return
		}
		pairs = append(pairs, placeholder, value)
	}
	for name, ep := range eps {
		pairs = append(pairs, tools.AddrPlaceholder(name), ep.Address)
		add(tools.DevicePlaceholder(name), ep.Device)
		port := ""
		if ep.Device != "" {
			port = strconv.Itoa(max(ep.Port, 1))
		}
		add(tools.PortPlaceholder(name), port)
		add(tools.GIDPlaceholder(name), gidOf(ep))
		pairs = append(pairs, tools.RailsPlaceholder(name), otherRails(ep))
		for g := range max(ep.GPUs, 1) {
			add(tools.NICPlaceholder(name, g), nearestNIC(ep, g))
		}
		for i := 1; i < len(ep.Rails); i++ {
			rail, r := endpoint.RailName(name, i), ep.Rails[i]
			add(tools.AddrPlaceholder(rail), r.Address)
			add(tools.DevicePlaceholder(rail), r.Device)
			add(tools.PortPlaceholder(rail), railPort(r))
			add(tools.GIDPlaceholder(rail), gidOf(endpoint.Endpoint{GIDIndex: r.GIDIndex}))
		}
	}
	s.r = strings.NewReplacer(pairs...)
	return s
}

// otherRails are the rails of a multi-rail pod after its data rail, as
// ",dev:port" each, leaving out those without an RDMA device (a rail that
// cannot carry RDMA is not named to NCCL, and the others still are).
func otherRails(ep endpoint.Endpoint) string {
	var b strings.Builder
	for i, r := range ep.Rails {
		if i == 0 || r.Device == "" {
			continue
		}
		fmt.Fprintf(&b, ",%s:%d", r.Device, max(r.Port, 1))
	}
	return b.String()
}

// nearestNIC is GPU gpu's nearest rail as "dev:port", from the affinity
// its machine's topology gave (endpoint.Affinity, GPUs named GPU0…);
// every rail, as otherRails follows the data device, where the matrix
// does not list that GPU; "" when the endpoint has no device.
func nearestNIC(ep endpoint.Endpoint, gpu int) string {
	for _, a := range ep.Affinity {
		if a.GPU != "GPU"+strconv.Itoa(gpu) || a.Device == "" {
			continue
		}
		for _, r := range ep.Rails {
			if r.Device == a.Device {
				return a.Device + ":" + strconv.Itoa(max(r.Port, 1))
			}
		}
		if a.Device == ep.Device {
			return a.Device + ":" + strconv.Itoa(max(ep.Port, 1))
		}
	}
	if ep.Device == "" {
		return ""
	}
	return ep.Device + ":" + strconv.Itoa(max(ep.Port, 1)) + otherRails(ep)
}

func railPort(r endpoint.Rail) string {
	if r.Device == "" {
		return ""
	}
	return strconv.Itoa(max(r.Port, 1))
}

func gidOf(ep endpoint.Endpoint) string {
	if ep.GIDIndex == nil {
		return ""
	}
	return strconv.Itoa(*ep.GIDIndex)
}

// gids fills ${gids:a,b,…}: the GID index the endpoints share, "" when
// they differ or one has none.
func gids(s string, eps map[string]endpoint.Endpoint) string {
	const open = "${gids:"
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return s
		}
		common := ""
		for k, name := range strings.Split(s[i+len(open):i+j], ",") {
			g := gidOf(eps[name])
			if k > 0 && g != common {
				g = ""
			}
			common = g
			if g == "" {
				break
			}
		}
		s = s[:i] + common + s[i+j+1:]
		if common == "" {
			return "" // left out
		}
	}
}

// command returns argv and env with every placeholder filled, or an error
// naming a placeholder that is unknown or has no value here. A value
// holding a run-time value that stays unknown is left out: an argument
// with the flag before it, a variable (and mpirun's -x of it).
func (s substituter) command(pc plan.PlannedCommand) ([]string, map[string]string, error) {
	argv := make([]string, 0, len(pc.Argv))
	for i, a := range pc.Argv {
		v, drop := s.value(a)
		if drop {
			if len(argv) > 0 && strings.HasPrefix(argv[len(argv)-1], "-") && i > 0 && argv[len(argv)-1] == pc.Argv[i-1] {
				argv = argv[:len(argv)-1]
			}
			continue
		}
		if err := leftover(v); err != nil {
			return nil, nil, fmt.Errorf("argument %q: %w", a, err)
		}
		argv = append(argv, v)
	}
	var env map[string]string
	var dropped []string
	if len(pc.Env) > 0 {
		env = make(map[string]string, len(pc.Env))
		for k, v := range pc.Env {
			val, drop := s.value(v)
			if drop {
				dropped = append(dropped, k)
				continue
			}
			if err := leftover(val); err != nil {
				return nil, nil, fmt.Errorf("environment %s=%q: %w", k, v, err)
			}
			env[k] = val
		}
	}
	for _, k := range dropped { // mpirun -x NAME of a variable left out
		for i := 0; i+1 < len(argv); i++ {
			if argv[i] == "-x" && argv[i+1] == k {
				argv = slices.Delete(argv, i, i+2)
				break
			}
		}
	}
	return argv, env, nil
}

// value fills one argument or variable; drop when a run-time placeholder
// in it has no value here.
func (s substituter) value(v string) (string, bool) {
	for _, u := range s.unknown {
		if strings.Contains(v, u) {
			return "", true
		}
	}
	if strings.Contains(v, "${gids:") {
		if v = gids(v, s.eps); v == "" {
			return "", true
		}
	}
	return s.r.Replace(v), false
}

func (s substituter) text(t string) string { return s.r.Replace(t) }

// leftover reports a ${…} the runner could not fill.
func leftover(s string) error {
	i := strings.Index(s, "${")
	if i < 0 {
		return nil
	}
	j := strings.IndexByte(s[i:], '}')
	if j < 0 {
		return nil
	}
	name := s[i : i+j+1]
	if name == tools.PlaceholderEtcd {
		return fmt.Errorf("%s used but no etcd runs (plan.needsEtcd is false)", name)
	}
	return fmt.Errorf("unknown placeholder %s (known: ${addr:ENDPOINT}, ${dev:ENDPOINT}, ${port:ENDPOINT}, ${gid:ENDPOINT}, ${gids:ENDPOINT,…}, ${rails:ENDPOINT}, ${nic:ENDPOINT@GPU}, ${etcd}, ${run}, ${out})", name)
}
