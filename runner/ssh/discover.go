package ssh

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/report"
	"github.com/rdmabench/rdmabench/runner/backend"
)

// Discover reads the RDMA NICs of ep's host through its sysfs over ssh
// (no rdmabench needed there). Results are kept per host for the run.
func (b *Backend) Discover(ctx context.Context, ep backend.Endpoint) (*nic.Inventory, error) {
	b.mu.Lock()
	inv := b.invs[ep.Host]
	b.mu.Unlock()
	if inv != nil {
		return inv, nil
	}
	inv, err := nic.DiscoverRemote(ctx, func(ctx context.Context, argv []string) ([]byte, error) {
		return b.Exec(ctx, ep, argv)
	})
	if err != nil {
		return nil, fmt.Errorf("ssh %s: discovering NICs: %w", ep.Host, err)
	}
	b.mu.Lock()
	b.invs[ep.Host] = inv
	b.mu.Unlock()
	return inv, nil
}

// resolveDevice checks the endpoint's RDMA device and GID index against
// the host's sysfs, so a wrong name fails before any tool starts, with the
// devices that do exist. "auto" becomes the first ACTIVE device (or stays
// empty on a host without RDMA); an unset GID index becomes the port's
// RoCE v2 IPv4 GID.
func (b *Backend) resolveDevice(ctx context.Context, ep *backend.Endpoint) error {
	if ep.Device == "" {
		return nil
	}
	inv, err := b.Discover(ctx, *ep)
	if err != nil {
		return err
	}
	auto := ep.Device == "auto"
	d, p, err := inv.Pick(ep.Device)
	if err != nil {
		if auto {
			ep.Device = ""
			return nil
		}
		return fmt.Errorf("ssh %s: endpoint %s: %w", ep.Host, ep.Name, err)
	}
	ep.Device = d.Name
	if ep.GIDIndex == nil {
		ep.GIDIndex = p.RoCEv2GIDIndex
		return nil
	}
	return checkGID(ep, p)
}

func checkGID(ep *backend.Endpoint, p *nic.Port) error {
	for _, g := range p.GIDs {
		if g.Index == *ep.GIDIndex {
			return nil
		}
	}
	var have []string
	for _, g := range p.GIDs {
		have = append(have, fmt.Sprintf("%d (%s %s)", g.Index, g.Type, g.GID))
	}
	hint := "remove gidIndex to use the RoCE v2 IPv4 GID"
	if p.RoCEv2GIDIndex != nil {
		hint = fmt.Sprintf("the RoCE v2 IPv4 GID is %d", *p.RoCEv2GIDIndex)
	}
	return fmt.Errorf("ssh %s: endpoint %s: GID index %d of %s port %d is empty; populated: %s; %s",
		ep.Host, ep.Name, *ep.GIDIndex, ep.Device, p.Port, strings.Join(have, ", "), hint)
}

// LineRate is `lineRate: auto` on ssh hosts: the rate of ep's device (or
// its host's first ACTIVE port), read from the host's sysfs, with where it
// came from ("vm1 rxe0 port 1: 2.5 Gb/sec (1X SDR)").
func (b *Backend) LineRate(ctx context.Context, ep backend.Endpoint) (bps float64, detail string, ok bool) {
	inv, err := b.Discover(ctx, ep)
	if err != nil {
		return 0, err.Error(), false
	}
	d, p, err := inv.Pick(ep.Device)
	if err != nil || p.RateBps <= 0 {
		return 0, "", false
	}
	return p.RateBps, fmt.Sprintf("%s %s port %d: %s", ep.Host, d.Name, p.Port, p.Rate), true
}

// HasRDMA reports whether ep's host has an RDMA device with an ACTIVE
// port (the runner skips RDMA tests where it has none).
func (b *Backend) HasRDMA(ctx context.Context, ep backend.Endpoint) bool {
	inv, err := b.Discover(ctx, ep)
	if err != nil {
		return false
	}
	_, p, err := inv.Pick("auto")
	return err == nil && p != nil
}

// Fingerprint is what ep's host says about the system measured: its kernel
// (uname -r, bounded) and the firmware and active MTU of ep's RDMA device
// where it has one. compare warns when any of them changed between runs.
func (b *Backend) Fingerprint(ctx context.Context, ep backend.Endpoint) map[string]string {
	fp := map[string]string{}
	uctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := b.Exec(uctx, ep, []string{"uname", "-r"}); err == nil {
		if v := strings.TrimSpace(string(out)); v != "" {
			fp[report.FingerprintKernel] = v
		}
	}
	if inv, err := b.Discover(ctx, ep); err == nil {
		if d, p, err := inv.Pick(ep.Device); err == nil {
			if d.FWVer != "" {
				fp[report.FingerprintNICFirmware] = d.FWVer
			}
			if p.ActiveMTU > 0 {
				fp[report.FingerprintMTU] = strconv.Itoa(p.ActiveMTU)
			}
		}
	}
	if len(fp) == 0 {
		return nil
	}
	return fp
}
