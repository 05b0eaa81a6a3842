package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/mpi"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// The launcher step of a multi-host MPI job (nccl): before the leg starts,
// the run's ssh keys go into every rank's endpoint and an sshd starts on
// every other rank (runner/mpi, through the backend's Exec only, so pods
// and ssh hosts get the same launcher); after the leg, and in the run's
// clean-up after Ctrl-C, they are removed together with every process
// of the job on every rank (orted and the ranks carry a marker).

// mpiUp brings up the ssh launch of every command that asks for one.
func (l *legRun) mpiUp(ctx context.Context) error {
	for _, pc := range l.leg.Commands {
		if pc.SSH == nil {
			continue
		}
		ranks, err := l.rankEndpoints(pc)
		if err != nil {
			return err
		}
		cfg := mpi.Config{Dir: l.subst.text(pc.SSH.Dir), Port: pc.SSH.Port, Marker: tools.MPIMarker + "=" + l.mpiMarker()}
		s, err := mpi.Up(ctx, l.r.cfg.Backend, cfg, ranks)
		if err != nil {
			return err
		}
		l.mpi = append(l.mpi, s)
		l.r.trackMPI(s, true)
		l.resolveMPIRun(ctx, pc.Endpoint, ranks[0])
	}
	return nil
}

// resolveMPIRun finds the launcher's mpirun and its prefix; when it
// cannot, the command keeps "mpirun" and the leg says why it failed.
func (l *legRun) resolveMPIRun(ctx context.Context, name string, ep endpoint.Endpoint) {
	path, prefix, err := mpi.Resolve(ctx, l.r.cfg.Backend, ep)
	if err != nil {
		l.notef("%v", err)
		return
	}
	if l.mpirun == nil {
		l.mpirun = map[string][2]string{}
	}
	l.mpirun[name] = [2]string{path, prefix}
}

// mpiDown ends the job's processes and sshd on every rank, on a fresh
// context (the leg's may be over: timeout, Ctrl-C).
func (l *legRun) mpiDown() {
	for _, s := range l.mpi {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.Down(ctx); err != nil {
			l.notef("%v", err)
		}
		cancel()
		l.r.trackMPI(s, false)
	}
	l.mpi = nil
}

// mpiMarker tells this repetition's processes from every other job's, even
// where endpoints share one process table (local, the kube test lane).
func (l *legRun) mpiMarker() string {
	return fmt.Sprintf("%s.%s.%d.%d", l.r.runID, sanitize(l.job.ID), l.legIdx, l.rep)
}

// rankEndpoints are the leg's ranks, the launcher's endpoint first.
func (l *legRun) rankEndpoints(pc plan.PlannedCommand) ([]endpoint.Endpoint, error) {
	names := append([]string{pc.Endpoint}, l.leg.Ranks...)
	var eps []endpoint.Endpoint
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		ep, ok := l.toolEndpoint(n) // mpirun and the sshd run beside nccl-tests
		if !ok {
			return nil, fmt.Errorf("MPI rank on endpoint %q, which the plan does not list", n)
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// mpiEnv completes an MPI launcher's environment at run time: the marker
// of this repetition, and NCCL_SOCKET_IFNAME / NCCL_IB_HCA from the
// ranks' discovery (the data interface: a pod's network interface, a
// host's RDMA netdev; the RDMA devices) unless the scenario set them, each
// a comma-separated list NCCL matches by prefix, so ranks whose names
// differ all find theirs. New names are forwarded with -x.
func (l *legRun) mpiEnv(pc plan.PlannedCommand, argv []string, env map[string]string) ([]string, map[string]string) {
	if len(argv) == 0 || argv[0] != "mpirun" || len(l.leg.Ranks) < 2 {
		return argv, env
	}
	out := make(map[string]string, len(env)+3)
	for k, v := range env {
		out[k] = v
	}
	if pc.SSH != nil {
		out[tools.MPIMarker] = l.mpiMarker()
	}
	eps, _ := l.rankEndpoints(pc)
	var add []string
	for k, v := range ncclDiscoveryVars(eps, out) {
		if _, set := out[k]; set || len(v) == 0 {
			continue
		}
		out[k] = strings.Join(v, ",")
		add = append(add, k)
	}
	slices.Sort(add)
	for _, k := range add {
		argv = slices.Insert(argv, 1, "-x", k)
	}
	if m, ok := l.mpirun[pc.Endpoint]; ok && pc.SSH != nil {
		argv = mpi.PrefixArgv(argv, m[0], m[1])
	}
	return argv, out
}

// ncclDiscoveryVars are the NCCL variables the ranks' discovery names:
// NCCL_SOCKET_IFNAME (their data interfaces) and NCCL_IB_HCA (every rail's
// device); none under Google's gIB plugin, which picks its own NICs.
func ncclDiscoveryVars(eps []endpoint.Endpoint, env map[string]string) map[string][]string {
	if tools.UsesGIB(env) {
		return nil
	}
	var ifaces, hcas []string
	for _, ep := range eps {
		if ep.Interface != "" && !slices.Contains(ifaces, ep.Interface) {
			ifaces = append(ifaces, ep.Interface)
		}
		for _, dev := range railDevices(ep) {
			if !slices.Contains(hcas, dev) {
				hcas = append(hcas, dev)
			}
		}
	}
	return map[string][]string{"NCCL_SOCKET_IFNAME": ifaces, "NCCL_IB_HCA": hcas}
}

// railDevices are the endpoint's RDMA devices: its data device, then its
// other rails' on a multi-rail pod.
func railDevices(ep endpoint.Endpoint) []string {
	var out []string
	if ep.Device != "" && ep.Device != "auto" {
		out = append(out, ep.Device)
	}
	for i, r := range ep.Rails {
		if i > 0 && r.Device != "" {
			out = append(out, r.Device)
		}
	}
	return out
}

// trackMPI keeps the launches that are up, for the run's clean-up.
func (r *run) trackMPI(s *mpi.Session, up bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mpi == nil {
		r.mpi = map[*mpi.Session]bool{}
	}
	if up {
		r.mpi[s] = true
	} else {
		delete(r.mpi, s)
	}
}

// mpiCleanup takes down launches a leg could not (a panic mid-leg).
func (r *run) mpiCleanup(ctx context.Context) {
	r.mu.Lock()
	left := make([]*mpi.Session, 0, len(r.mpi))
	for s := range r.mpi {
		left = append(left, s)
	}
	r.mpi = nil
	r.mu.Unlock()
	for _, s := range left {
		if err := s.Down(ctx); err != nil {
			r.progress.printf("clean-up: %v", err)
		}
	}
}
