package runner

import "strings"

// InstallHint says how to install a missing binary. It is a variable so the
// planner's tool table can take over once it is the single source.
var InstallHint = defaultInstallHint

func defaultInstallHint(binary string) string {
	switch {
	case strings.HasPrefix(binary, "ib_") && (strings.HasSuffix(binary, "_bw") || strings.HasSuffix(binary, "_lat")):
		return "install perftest (Debian/Ubuntu: apt-get install perftest; RHEL: dnf install perftest)"
	case binary == "rping":
		return "install rdma-core's examples (Debian/Ubuntu: apt-get install rdmacm-utils; RHEL: dnf install librdmacm-utils)"
	case binary == "ucx_perftest":
		return "install UCX's tools (Debian/Ubuntu: apt-get install ucx-utils; RHEL: dnf install ucx)"
	case binary == "iperf3":
		return "install iperf3 (apt-get install iperf3 / dnf install iperf3)"
	case binary == "nixlbench":
		return "build nixlbench from https://github.com/ai-dynamo/nixl (benchmark/nixlbench) or use an image that has it"
	case strings.HasSuffix(binary, "_perf"):
		return "build nccl-tests from https://github.com/NVIDIA/nccl-tests (make MPI=1) and put build/ on PATH"
	case binary == "mpirun":
		return "install an MPI (Debian/Ubuntu: apt-get install openmpi-bin)"
	}
	return "install it and make sure it is on PATH"
}
