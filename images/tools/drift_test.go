// Package tools holds no code: images/tools is the tools image's build
// (build.sh, packages.txt). Its test keeps the runner and the image from
// drifting apart. The GPU tools (nixlbench, nccl-tests) come from the image
// the user already serves with; this project builds none of them.
package tools

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/tool"
)

// debianPackage says which Debian package of the CPU image provides a
// program (as bookworm ships it). A program missing here must be a GPU
// tool the user's image provides.
var debianPackage = map[string]string{
	"ib_write_bw": "perftest", "ib_read_bw": "perftest", "ib_send_bw": "perftest",
	"ib_write_lat": "perftest", "ib_read_lat": "perftest", "ib_send_lat": "perftest",
	"rping":        "rdmacm-utils",
	"ucx_perftest": "ucx-utils",
	"iperf3":       "iperf3",
	"mpirun":       "openmpi-bin",
	"sshd":         "openssh-server",
	"ssh":          "openssh-client",
	"ssh-keygen":   "openssh-client",
	"ibv_devinfo":  "ibverbs-utils",
	"ip":           "iproute2",
	"rdma":         "iproute2",
	"pkill":        "procps",
	"ethtool":      "ethtool",
}

// launched is every program the runner starts on an endpoint: each tool's
// binaries (every nccl collective's), the NCCL launcher's mpirun, ssh and
// sshd, rdmabench itself (`rdmabench etcd` in the cluster) and the path
// proof's ethtool.
func launched() []string {
	var out []string
	for _, name := range tools.Names() {
		spec, ok := tools.Lookup(name)
		if !ok {
			continue
		}
		out = append(out, spec.Programs...) // every nccl collective's binary too
	}
	out = append(out, "mpirun", "ssh", "sshd", "rdmabench", "ethtool")
	slices.Sort(out)
	return slices.Compact(out)
}

// cpuPackages is images/tools/packages.txt, comments dropped.
func cpuPackages(t *testing.T) []string {
	b, err := os.ReadFile("packages.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		out = append(out, strings.Fields(line)...)
	}
	return out
}

// gpuImage lists the programs the tool table says come from the user's
// serving image (tool.SourceServing): each such tool's programs, every nccl
// collective's.
func gpuImage() []string {
	var out []string
	for _, name := range tools.Names() {
		spec, _ := tools.Lookup(name)
		if spec.Source != tool.SourceServing {
			continue
		}
		out = append(out, spec.Programs...) // every nccl collective's binary too
	}
	return out
}

// bundle lists rdmabench's own programs besides rdmabench (tool.SourceBundle):
// the tools image carries them, built from cmd/<program>.
func bundle() []string {
	var out []string
	for _, name := range tools.Names() {
		if spec, _ := tools.Lookup(name); spec.Source == tool.SourceBundle {
			out = append(out, spec.Programs...)
		}
	}
	return out
}

// TestImagesProvideEveryLaunchedProgram: every program runner/tools
// launches is in the CPU tools image (a package of packages.txt, or
// rdmabench, which build.sh copies in), or is a GPU tool the user's image
// provides (tool.SourceServing).
func TestImagesProvideEveryLaunchedProgram(t *testing.T) {
	pkgs, gpu := cpuPackages(t), gpuImage()
	for _, prog := range launched() {
		switch {
		case prog == "rdmabench":
			if b, err := os.ReadFile("build.sh"); err != nil || !strings.Contains(string(b), "/usr/local/bin/") {
				t.Errorf("build.sh no longer copies rdmabench to /usr/local/bin")
			}
		case debianPackage[prog] != "":
			if !slices.Contains(pkgs, debianPackage[prog]) {
				t.Errorf("%s: its package %s is not in packages.txt", prog, debianPackage[prog])
			}
		case slices.Contains(bundle(), prog):
			b, _ := os.ReadFile("../Makefile")
			if !strings.Contains(string(b), "./cmd/"+prog) || !strings.Contains(string(b), "$(IMG)/"+prog) {
				t.Errorf("%s: rdmabench's own program, but images/Makefile does not build it into the tools image", prog)
			}
		case slices.Contains(gpu, prog):
		default:
			t.Errorf("%s: launched by the runner, in neither the tools image (packages.txt) nor a GPU-image tool of the table", prog)
		}
	}
}

// No GPU tool comes from a Debian package of the tools image (Debian's
// builds lack CUDA), and no CPU tool is left to the user's image.
func TestImageOfEveryTool(t *testing.T) {
	for _, name := range tools.Names() {
		spec, _ := tools.Lookup(name)
		for _, b := range spec.Programs[:1] {
			_, debian := debianPackage[b]
			if spec.Source != tool.SourceBundle && (spec.Source == tool.SourceServing) == debian {
				t.Errorf("%s (%s): from %q, yet a Debian package of the tools image: %v", name, b, spec.Source, debian)
			}
		}
	}
}

// The test itself: the lists it relies on are not empty.
func TestDriftIsCaught(t *testing.T) {
	if got := gpuImage(); !slices.Contains(got, "nixlbench") || !slices.Contains(got, "sendrecv_perf") {
		t.Fatalf("GPU image tools %v: want nixlbench and the nccl-tests binaries", got)
	}
	for _, prog := range []string{"nixlbench", "all_reduce_perf", "ib_write_bw", "mpirun", "sshd", "rdmabench"} {
		if !slices.Contains(launched(), prog) {
			t.Errorf("launched() misses %s", prog)
		}
	}
}
