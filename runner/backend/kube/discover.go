package kube

import (
	"context"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// Discover reads the RDMA NICs a pod sees (its sysfs, through exec).
func (b *Backend) Discover(ctx context.Context, ep endpoint.Endpoint) (*nic.Inventory, error) {
	return b.disc.Discover(ctx, ep)
}

// LineRate is `lineRate: auto` in pods: the rate of the endpoint's device
// as its pod sees it.
func (b *Backend) LineRate(ctx context.Context, ep endpoint.Endpoint) (float64, string, bool) {
	if !b.provisioned(ep) {
		return 0, "", false
	}
	return b.disc.LineRate(ctx, ep)
}

// HasRDMA reports whether the endpoint's pod sees an RDMA device with an
// ACTIVE port. Before the pods exist (planning) it says yes, so that every
// test is planned; the runner asks again per job once they run, and skips
// RDMA-only tests with the reason.
func (b *Backend) HasRDMA(ctx context.Context, ep endpoint.Endpoint) bool {
	if !b.provisioned(ep) {
		return true
	}
	return b.disc.HasRDMA(ctx, ep)
}

// Fingerprint is the kernel, NIC firmware and MTU as the endpoint's pod
// sees them, plus its node.
func (b *Backend) Fingerprint(ctx context.Context, ep endpoint.Endpoint) map[string]string {
	if !b.provisioned(ep) {
		return nil
	}
	return b.disc.Fingerprint(ctx, ep)
}

func (b *Backend) provisioned(ep endpoint.Endpoint) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pods[ep.Name]
	return ok && p.node != ""
}

// HasGPU reports whether the endpoint's pod sees a GPU device. Before the
// pods exist it says yes (the runner asks again once they run).
func (b *Backend) HasGPU(ctx context.Context, ep endpoint.Endpoint) bool {
	if !b.provisioned(ep) {
		return true
	}
	return b.disc.HasGPU(ctx, ep)
}
