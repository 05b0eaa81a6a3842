package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// SysRoot is the root this host's sysfs is read under (tests point it at a
// recorded tree).
var SysRoot = "/"

// HasRDMA reports whether this host has an RDMA device with an ACTIVE
// port: every local endpoint shares the host's devices.
func (b *Backend) HasRDMA(_ context.Context, _ endpoint.Endpoint) bool {
	return nic.HasRDMA(SysRoot)
}

// LineRate is `lineRate: auto` on this host: the rate of the endpoint's
// device (or the first ACTIVE port) and where it came from.
func (b *Backend) LineRate(_ context.Context, ep endpoint.Endpoint) (float64, string, bool) {
	inv, err := nic.Discover(nic.Options{Root: SysRoot, NoGPU: true})
	if err != nil {
		return 0, err.Error(), false
	}
	d, p, err := inv.Pick(ep.Device)
	if err != nil || p.RateBps <= 0 {
		return 0, "", false
	}
	return p.RateBps, fmt.Sprintf("%s port %d: %s", d.Name, p.Port, p.Rate), true
}

// Fingerprint is what this host says about the system measured: the
// kernel, and the firmware and active MTU of the endpoint's RDMA device
// where it has one. compare warns when any of them changed between runs.
func (b *Backend) Fingerprint(_ context.Context, ep endpoint.Endpoint) map[string]string {
	var kernel string
	if k, err := os.ReadFile(filepath.Join(SysRoot, "proc", "sys", "kernel", "osrelease")); err == nil {
		kernel = strings.TrimSpace(string(k))
	}
	inv, _ := nic.Discover(nic.Options{Root: SysRoot, NoGPU: true})
	return nic.Fingerprint(kernel, inv, ep.Device)
}
