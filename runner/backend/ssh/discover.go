package ssh

import (
	"context"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// Discover reads the RDMA NICs of ep's host through its sysfs over ssh
// (no rdmabench needed there). Results are kept per host for the run.
func (b *Backend) Discover(ctx context.Context, ep endpoint.Endpoint) (*nic.Inventory, error) {
	return b.disc.Discover(ctx, ep)
}

// LineRate is `lineRate: auto` on ssh hosts: the rate of ep's device (or
// its host's first ACTIVE port), read from the host's sysfs, with where it
// came from ("vm1 rxe0 port 1: 2.5 Gb/sec (1X SDR)").
func (b *Backend) LineRate(ctx context.Context, ep endpoint.Endpoint) (bps float64, detail string, ok bool) {
	return b.disc.LineRate(ctx, ep)
}

// HasRDMA reports whether ep's host has an RDMA device with an ACTIVE
// port (the runner skips RDMA tests where it has none).
func (b *Backend) HasRDMA(ctx context.Context, ep endpoint.Endpoint) bool {
	return b.disc.HasRDMA(ctx, ep)
}

// Fingerprint is what ep's host says about the system measured: its kernel
// (uname -r, bounded) and the firmware and active MTU of ep's RDMA device
// where it has one. compare warns when any of them changed between runs.
func (b *Backend) Fingerprint(ctx context.Context, ep endpoint.Endpoint) map[string]string {
	return b.disc.Fingerprint(ctx, ep)
}
