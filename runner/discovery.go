package runner

import (
	"context"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/judge"
)

// LineRater is implemented by backends that can read an endpoint's NIC
// rate (for `lineRate: auto`): bits/s and where it came from.
type LineRater interface {
	LineRate(ctx context.Context, ep backend.Endpoint) (bps float64, detail string, ok bool)
}

// RDMAChecker is implemented by backends that can tell whether an
// endpoint has a usable RDMA device (RDMA-only tests are skipped where
// it has none).
type RDMAChecker interface {
	HasRDMA(ctx context.Context, ep backend.Endpoint) bool
}

// BackendNICRate is the NICRate of a backend for its first endpoint, or
// nil when the backend cannot read rates.
func BackendNICRate(ctx context.Context, be backend.Backend, eps []backend.Endpoint) judge.NICRate {
	lr, ok := be.(LineRater)
	if !ok || len(eps) == 0 {
		return nil
	}
	return func() (float64, string, bool) { return lr.LineRate(ctx, eps[0]) }
}

// Fingerprinter is implemented by backends that can describe the system an
// endpoint runs on (kernel, NIC firmware, MTU: report.Fingerprint* keys),
// so that compare can warn when two runs measured different systems.
type Fingerprinter interface {
	Fingerprint(ctx context.Context, ep backend.Endpoint) map[string]string
}

// BackendFingerprint is the fingerprint of a backend's first endpoint, or
// nil when the backend cannot tell.
func BackendFingerprint(ctx context.Context, be backend.Backend, eps []backend.Endpoint) map[string]string {
	f, ok := be.(Fingerprinter)
	if !ok || len(eps) == 0 {
		return nil
	}
	return f.Fingerprint(ctx, eps[0])
}

// BackendHasRDMA is the planner's per-endpoint RDMA check through the
// backend, falling back to this host's devices.
func BackendHasRDMA(ctx context.Context, be backend.Backend) func(backend.Endpoint) bool {
	if c, ok := be.(RDMAChecker); ok {
		return func(ep backend.Endpoint) bool { return c.HasRDMA(ctx, ep) }
	}
	return func(backend.Endpoint) bool { ok, _ := DetectRDMA(); return ok }
}

// EtcdHoster is implemented by backends whose endpoints cannot reach an
// etcd on this host (pods): they run nixlbench's etcd beside the
// endpoints and return the URL the tools use and the one this process
// uses (a port-forward), removing it in Cleanup.
type EtcdHoster interface {
	StartEtcd(ctx context.Context) (toolURL, localURL string, err error)
}
