package runner

import (
	"os"
	"strings"

	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// SysClassInfiniband is where the kernel lists RDMA devices.
const SysClassInfiniband = "/sys/class/infiniband"

// DetectRDMA reports whether this host has an RDMA device, and if not why.
// It is a variable so NIC discovery can replace it.
var DetectRDMA = func() (bool, string) { return rdmaDevicesIn(SysClassInfiniband) }

func rdmaDevicesIn(dir string) (bool, string) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return false, "no RDMA device on this host (" + dir + " is empty or absent)"
	}
	return true, ""
}

// needsRDMA says whether a test cannot run without an RDMA device: the
// scenario's requires when set, else by tool (perftest and rping always).
func needsRDMA(t *scenarios.Test, tool string) bool {
	if t != nil {
		return tools.NeedsRDMA(t)
	}
	switch tool {
	case scenarios.ToolRping:
		return true
	}
	return strings.HasPrefix(tool, "ib_")
}
