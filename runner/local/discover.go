package local

import (
	"context"
	"os"

	"github.com/rdmabench/rdmabench/runner/backend"
)

// SysClassInfiniband lists this host's RDMA devices.
var SysClassInfiniband = "/sys/class/infiniband"

// HasRDMA reports whether this host has an RDMA device: every local
// endpoint shares it.
func (b *Backend) HasRDMA(_ context.Context, _ backend.Endpoint) bool {
	ents, err := os.ReadDir(SysClassInfiniband)
	return err == nil && len(ents) > 0
}
