package runner

import (
	"context"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
)

// BackendNICRate is the NICRate of a backend for its first endpoint, or
// nil when the backend cannot read rates (backend.LineRater).
func BackendNICRate(ctx context.Context, be backend.Backend, eps []endpoint.Endpoint) judge.NICRate {
	lr, ok := be.(backend.LineRater)
	if !ok || len(eps) == 0 {
		return nil
	}
	return func() (float64, string, bool) { return lr.LineRate(ctx, eps[0]) }
}

// BackendFingerprint is the fingerprint of a backend's first endpoint, or
// nil when the backend cannot tell (backend.Fingerprinter).
func BackendFingerprint(ctx context.Context, be backend.Backend, eps []endpoint.Endpoint) map[string]string {
	f, ok := be.(backend.Fingerprinter)
	if !ok || len(eps) == 0 {
		return nil
	}
	return f.Fingerprint(ctx, eps[0])
}

// BackendHasRDMA is the planner's per-endpoint RDMA check through the
// backend (backend.RDMAChecker), falling back to this host's devices.
func BackendHasRDMA(ctx context.Context, be backend.Backend) func(endpoint.Endpoint) bool {
	if c, ok := be.(backend.RDMAChecker); ok {
		return func(ep endpoint.Endpoint) bool { return c.HasRDMA(ctx, ep) }
	}
	return func(endpoint.Endpoint) bool { ok, _ := DetectRDMA(); return ok }
}

// sharesHost says whether a backend's endpoints are processes of this
// host (backend.HostSharer).
func sharesHost(be backend.Backend) bool {
	h, ok := be.(backend.HostSharer)
	return ok && h.SharesHost()
}

// SysClassInfiniband is where the kernel lists RDMA devices.
const SysClassInfiniband = "/sys/class/infiniband"

// DetectRDMA reports whether this host has an RDMA device with an ACTIVE
// port (NIC discovery), and if not why. A variable so tests can swap it.
var DetectRDMA = func() (bool, string) {
	if nic.HasRDMA("/") {
		return true, ""
	}
	return false, "no RDMA device with an ACTIVE port on this host (" + SysClassInfiniband + ")"
}
