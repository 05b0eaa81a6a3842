package runner

import (
	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/tools"
)

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

// requires is the transport a test asked for, "rdma" or "tcp", as the
// report shows it (a TCP result of a "tcp" test is no fallback).
func (r *run) requires(test, tool string) string {
	t := r.tests[test]
	if t != nil && t.Requires != "" {
		return t.Requires
	}
	if tools.NeedsRDMA(t, tool) {
		return "rdma"
	}
	return "tcp"
}
