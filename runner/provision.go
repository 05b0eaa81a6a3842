package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	runetcd "github.com/rdmabench/rdmabench/runner/etcd"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/preflight"
)

// provision is the first stage of a run: it writes the scenario and the
// plan into the results folder, has the backend create (or check) every
// endpoint, and discovers line rate and fingerprint from them.
func (r *run) provision(ctx context.Context, rep *schema.Report) error {
	if len(r.cfg.ScenarioBytes) > 0 {
		if err := r.dir.writeFile(ScenarioFile, r.cfg.ScenarioBytes); err != nil {
			return err
		}
	}
	if err := r.dir.writePlan(r.cfg.Plan); err != nil {
		return err
	}
	eps, err := r.cfg.Backend.Provision(ctx, r.cfg.Plan.Endpoints)
	if err != nil {
		return fmt.Errorf("provision endpoints on %s: %w", r.cfg.Backend.Name(), err)
	}
	if r.cfg.Discover != nil {
		r.cfg.LineRate, r.cfg.Fingerprint = r.cfg.Discover(ctx, eps)
		rep.Run.LineRate, rep.Run.Fingerprint = r.cfg.LineRate, r.cfg.Fingerprint
	}
	r.endpointRates(ctx, eps)
	r.sharedPorts = sharedPorts(eps)
	rep.Run.SharedPorts = r.sharedPorts
	for _, g := range r.sharedPorts {
		r.progress.printf("note: %s send on one NIC port on %s (%s): tests of theirs that run at the same time split its line rate, and say so",
			strings.Join(g.Endpoints, ", "), g.Machine, g.Port)
	}
	r.provisioned = eps
	r.endpoints = map[string]endpoint.Endpoint{}
	for _, ep := range eps {
		r.endpoints[ep.Name] = ep
		rep.Endpoints = append(rep.Endpoints, endpointInfo(ep))
		if ep.Host != "" && !slices.Contains(rep.Run.Hosts, ep.Host) {
			rep.Run.Hosts = append(rep.Run.Hosts, ep.Host)
		}
	}
	return nil
}

// endpointInfo is what report.json says of a provisioned endpoint, its
// rails included.
func endpointInfo(ep endpoint.Endpoint) schema.EndpointInfo {
	info := schema.EndpointInfo{Name: ep.Name, Pool: ep.Pool, Host: ep.Host, Node: ep.Node, Pod: ep.Pod,
		Device: ep.Device, Address: ep.Address, Network: ep.Network, Interface: ep.Interface,
		Port: ep.Port, GIDIndex: ep.GIDIndex, DeviceFrom: ep.DeviceFrom, DataDevice: ep.DataDevice}
	for _, r := range ep.Rails {
		info.Rails = append(info.Rails, schema.Rail(r))
	}
	for _, a := range ep.Affinity {
		info.Affinity = append(info.Affinity, schema.Affinity{Endpoint: ep.Name, GPU: a.GPU, Device: a.Device, Relation: a.Relation})
	}
	return info
}

// startEtcd starts the embedded etcd (or connects to Config.EtcdURL), or
// has the backend run one beside the endpoints (backend.EtcdHoster).
func (r *run) startEtcd(ctx context.Context) error {
	r.etcdURL = r.cfg.EtcdURL
	local := r.etcdURL
	switch h, hosted := r.cfg.Backend.(backend.EtcdHoster); {
	case r.etcdURL != "":
	case hosted:
		// The endpoints cannot reach this host (pods): the backend runs
		// the etcd beside them and gives the runner its own way in.
		tools, runner, err := h.StartEtcd(ctx)
		if err != nil {
			return fmt.Errorf("etcd for nixlbench on %s: %w", r.cfg.Backend.Name(), err)
		}
		r.etcdURL, local = tools, runner
	default:
		srv, err := runetcd.Start(ctx, runetcd.Config{})
		if err != nil {
			return fmt.Errorf("embedded etcd for nixlbench: %w", err)
		}
		r.etcdSrv, r.etcdURL, local = srv, srv.URL, srv.URL
	}
	c, err := runetcd.NewClient(local)
	if err != nil {
		return fmt.Errorf("etcd client for %s: %w", local, err)
	}
	r.etcd = c
	if err := runetcd.Answers(ctx, c); err != nil {
		fix := ""
		if r.cfg.EtcdURL != "" {
			fix = " (check --etcd: the URL of an etcd v3 this host can reach, e.g. http://10.0.0.5:2379)"
		}
		return fmt.Errorf("etcd for nixlbench at %s: %w%s", local, err, fix)
	}
	return nil
}

// cleanup undoes provision, once the rounds are over: MPI launchers, the
// endpoints (unless --keep), the etcd. It runs on a fresh context: after
// Ctrl-C the run's is done.
func (r *run) cleanup() {
	bound := r.cfg.CleanupTimeout
	if bound <= 0 {
		bound = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	r.mpiCleanup(ctx)
	if k, ok := r.cfg.Backend.(backend.Keeper); ok && r.cfg.Keep {
		hint := "remove them with rdmabench clean"
		if h := k.KeepHint(); h != "" {
			hint = h
		}
		r.progress.printf("--keep: endpoints left in place for debugging; %s", hint)
	} else if err := r.cfg.Backend.Cleanup(ctx); err != nil {
		r.progress.printf("clean-up: %v", err)
	}
	if r.etcd != nil {
		r.etcd.Close()
	}
	if r.etcdSrv != nil {
		_ = r.etcdSrv.Close()
	}
}

// endpointRates reads each endpoint's own line rate (its device's port, as
// its backend sees it) for `lineRate: auto`, so that a pair is held to the
// lower of its two ends rather than to the first endpoint's NIC.
func (r *run) endpointRates(ctx context.Context, eps []endpoint.Endpoint) {
	lr, ok := r.cfg.Backend.(backend.LineRater)
	if !ok || r.cfg.LineRate == nil || r.cfg.LineRate.Source != schema.LineRateNIC {
		return
	}
	r.rates = map[string]schema.LineRate{}
	for _, ep := range eps {
		if bps, detail, ok := lr.LineRate(ctx, ep); ok && bps > 0 {
			r.rates[ep.Name] = schema.LineRate{Bps: bps, Source: schema.LineRateNIC, Detail: detail}
		}
	}
}

// runPreflight runs the checks once the endpoints exist and keeps them for
// the skips and the report.
func (r *run) runPreflight(ctx context.Context, rep *schema.Report) {
	if r.cfg.NoPreflight {
		return
	}
	rep.Preflight, r.mtus = preflight.RunWith(ctx, r.cfg.Backend, r.cfg.Plan, r.cfg.Scenario, r.provisioned,
		preflight.Options{Platform: r.cfg.Platform, Timeout: r.cfg.PreflightTimeout})
	r.noteLibraryVersions(rep)
	r.preflight = map[string]schema.PreflightEndpoint{}
	for _, ep := range rep.Preflight {
		r.preflight[ep.Endpoint] = ep
		for _, c := range ep.Checks {
			if c.Status == schema.PreflightFail || c.Status == schema.PreflightWarn { // a skip's tests say why
				r.progress.printf("preflight %s %s on %s: %s", strings.ToUpper(c.Status), c.ID, ep.Endpoint, c.Evidence)
			}
		}
		if ep.Error != "" {
			r.progress.printf("preflight on %s: %s", ep.Endpoint, ep.Error)
		}
	}
}

// noteLibraryVersions adds the first endpoint's library versions to the
// run's fingerprint (where discovery did not say them), so that compare
// warns when UCX or NCCL changed between two runs, and says where the
// endpoints disagree among themselves: two UCX versions in one run is a
// result of its own.
func (r *run) noteLibraryVersions(rep *schema.Report) {
	seen := map[string]map[string][]string{} // key → version → endpoints
	for _, ep := range rep.Preflight {
		for k, v := range ep.Versions {
			if seen[k] == nil {
				seen[k] = map[string][]string{}
			}
			seen[k][v] = append(seen[k][v], ep.Endpoint)
		}
	}
	if len(rep.Preflight) > 0 && len(rep.Preflight[0].Versions) > 0 {
		fp := maps.Clone(r.cfg.Fingerprint) // the caller's map stays as given
		if fp == nil {
			fp = map[string]string{}
		}
		for k, v := range rep.Preflight[0].Versions {
			if _, known := fp[k]; !known {
				fp[k] = v
			}
		}
		r.cfg.Fingerprint, rep.Run.Fingerprint = fp, fp
	}
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if len(seen[k]) < 2 {
			continue
		}
		var parts []string
		for _, v := range slices.Sorted(maps.Keys(seen[k])) {
			parts = append(parts, fmt.Sprintf("%s on %s", v, briefList(seen[k][v])))
		}
		r.progress.printf("preflight WARN %s differs between endpoints: %s", k, strings.Join(parts, "; "))
	}
}

// briefList names up to three endpoints, then how many more.
func briefList(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
