// Package ssh is the runner backend whose endpoints are processes on hosts
// reached with ssh (bare-metal nodes, Slurm clusters before Kubernetes).
// Host keys are checked against known_hosts by default; every command runs
// in its own remote process group, so Kill, a cancelled context and Cleanup
// end the whole remote process tree; connections are reused per host.
package ssh

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Options tune the backend; zero values take the defaults.
type Options struct {
	// DialTimeout bounds the TCP connect, HandshakeTimeout the ssh
	// handshake and authentication. Default 10 s each.
	DialTimeout      time.Duration
	HandshakeTimeout time.Duration
	// KillGrace is how long Kill waits after SIGTERM before SIGKILL. Default 2 s.
	KillGrace time.Duration
	// KnownHostsFile is used for hosts that do not name their own.
	// Default ~/.ssh/known_hosts.
	KnownHostsFile string
	// DefaultUser is used for hosts that do not name a user. Default $USER.
	DefaultUser string
}

// Backend runs endpoints' commands on ssh hosts.
type Backend struct {
	opts  Options
	hosts map[string]scenarios.Host

	mu    sync.Mutex
	conns map[string]*hostConn
	procs remote.Tracker[*process]
	disc  remote.Discovery
	// provisioned are the endpoints as Provision returned them (StartEtcd
	// runs the etcd on the first); listeners the etcd's local forward.
	provisioned []endpoint.Endpoint
	// pickEtcdPort replaces the etcd's drawn port (tests).
	pickEtcdPort func() int
	listeners    []net.Listener
}

// The contract (runner/backend) and the capabilities this backend has.
var (
	_ backend.Backend       = (*Backend)(nil)
	_ backend.StdinExecer   = (*Backend)(nil)
	_ backend.LineRater     = (*Backend)(nil)
	_ backend.RDMAChecker   = (*Backend)(nil)
	_ backend.Fingerprinter = (*Backend)(nil)
	_ backend.EtcdHoster    = (*Backend)(nil)
	_ backend.Keeper        = (*Backend)(nil)
)

// New returns a backend for the scenario's hosts. Nothing is dialled
// until Provision or the first command.
func New(hosts []scenarios.Host, opts Options) (*Backend, error) {
	b := &Backend{opts: withDefaults(opts), hosts: map[string]scenarios.Host{},
		conns: map[string]*hostConn{}}
	b.disc = remote.Discovery{Exec: b.Exec, Key: func(ep endpoint.Endpoint) string { return ep.Host }, Prefix: "ssh"}
	for _, h := range hosts {
		if h.Name == "" || h.Address == "" {
			return nil, fmt.Errorf("ssh host %q: name and address are required", h.Name)
		}
		if _, dup := b.hosts[h.Name]; dup {
			return nil, fmt.Errorf("ssh host %q is listed twice", h.Name)
		}
		b.hosts[h.Name] = h
	}
	return b, nil
}

func withDefaults(o Options) Options {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 2 * time.Second
	}
	return o
}

// Name is "ssh".
func (b *Backend) Name() string { return scenarios.BackendSSH }

// KeepHint is "": the runner's generic hint. What --keep leaves (the
// processes, their scratch folders) is on the hosts, outside this process.
func (b *Backend) KeepHint() string { return "" }

// Provision connects to every endpoint's host (checking its host key and
// credentials), fills Address with the host's data address, and checks the
// endpoint's RDMA device and GID index against the host's sysfs.
func (b *Backend) Provision(ctx context.Context, eps []endpoint.Endpoint) ([]endpoint.Endpoint, error) {
	out := make([]endpoint.Endpoint, len(eps))
	for i, ep := range eps {
		h, err := b.host(ep)
		if err != nil {
			return nil, err
		}
		if _, err := b.conn(h.Name).client(ctx); err != nil {
			return nil, err
		}
		ep.Address = dataAddress(h)
		if err := b.disc.ResolveDevice(ctx, &ep, remote.DeviceHints{}); err != nil {
			return nil, err
		}
		if err := b.resolveRails(ctx, &ep); err != nil {
			return nil, err
		}
		// The GPU↔NIC pairs from the host's nvidia-smi topo -m, as on kube.
		ep.Affinity = b.disc.Affinity(ctx, ep)
		out[i] = ep
	}
	b.mu.Lock()
	b.provisioned = out
	b.mu.Unlock()
	return out, nil
}

// resolveRails gives a host with rails (hosts[].rails) each rail's RDMA
// device, port, GID and line rate, found from its address as the data
// address's are; rail 0 is the data address as already resolved. A host
// whose device the scenario names keeps no rails.
func (b *Backend) resolveRails(ctx context.Context, ep *endpoint.Endpoint) error {
	if len(ep.Rails) < 2 || !ep.ResolveDevice {
		ep.Rails = nil
		return nil
	}
	rails := make([]endpoint.Rail, len(ep.Rails))
	for i, planned := range ep.Rails {
		r := *ep
		if i > 0 {
			r.Device, r.Port, r.GIDIndex, r.DeviceFrom, r.NoDevice, r.DataDevice, r.Interface = "", 0, nil, "", "", "", ""
			r.Address = planned.Address
			if err := b.disc.ResolveDevice(ctx, &r, remote.DeviceHints{}); err != nil {
				return err
			}
		}
		rails[i] = endpoint.Rail{Network: planned.Network, Interface: r.Interface, Address: r.Address, Device: r.Device,
			Port: r.Port, GIDIndex: r.GIDIndex, DeviceFrom: r.DeviceFrom, NoDevice: r.NoDevice}
		if r.Device != "" {
			rails[i].RateBps, _, _ = b.disc.LineRate(ctx, r)
		}
	}
	ep.Rails = rails
	return nil
}

func (b *Backend) host(ep endpoint.Endpoint) (scenarios.Host, error) {
	h, ok := b.hosts[ep.Host]
	if !ok {
		return h, fmt.Errorf("endpoint %s: ssh host %q is not in the scenario's hosts", ep.Name, ep.Host)
	}
	return h, nil
}

// dataAddress is what tools connect to: dataAddress, else the ssh address.
func dataAddress(h scenarios.Host) string {
	if h.DataAddress != "" {
		return h.DataAddress
	}
	if host, _, err := net.SplitHostPort(h.Address); err == nil {
		return host
	}
	return h.Address
}

// sshAddress is host:port of the ssh server.
func sshAddress(h scenarios.Host) string {
	if _, _, err := net.SplitHostPort(h.Address); err == nil {
		return h.Address
	}
	port := h.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(h.Address, strconv.Itoa(port))
}

func (b *Backend) conn(name string) *hostConn {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conns[name]
	if c == nil {
		c = &hostConn{host: b.hosts[name], opts: b.opts}
		b.conns[name] = c
	}
	return c
}

// Cleanup kills every process still running (its whole remote group) and
// closes the connections. It works on a fresh context after Ctrl-C.
func (b *Backend) Cleanup(ctx context.Context) error {
	first := b.procs.KillAll(ctx, (*process).killBound, (*process).kill) // the etcd too
	b.mu.Lock()
	lns := b.listeners
	b.listeners = nil
	b.mu.Unlock()
	for _, ln := range lns {
		_ = ln.Close()
	}
	b.mu.Lock()
	conns := b.conns
	b.conns = map[string]*hostConn{}
	b.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	return first
}
