// Package tools holds no code: images/tools is the tools image's build
// (build.sh, packages.txt, Containerfile.gpu). Its test keeps the runner
// and the images from drifting apart.
package tools

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// debianPackage says which Debian package of the CPU image provides a
// program (as bookworm ships it). A program missing here must come from
// the GPU image's build steps.
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
}

// launched is every program the runner starts on an endpoint: each tool's
// binaries (every nccl collective's), the NCCL launcher's mpirun, ssh and
// sshd, and rdmabench itself (`rdmabench etcd` in the cluster).
func launched() []string {
	var out []string
	for _, name := range tools.Names() {
		spec, ok := tools.Lookup(name)
		if !ok {
			continue
		}
		out = append(out, spec.Binaries...)
		if spec.Family == parsers.FamilyNCCL {
			for _, c := range scenarios.Collectives {
				out = append(out, tools.NCCLBinary(c))
			}
		}
	}
	out = append(out, "mpirun", "ssh", "sshd", "rdmabench")
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

// gpuInstalled reads Containerfile.gpu's `install ... /usr/local/bin/`
// steps: the programs the GPU image puts on PATH.
func gpuInstalled(t *testing.T) []string {
	b, err := os.ReadFile("Containerfile.gpu")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "RUN ")
		for _, step := range strings.Split(line, "&&") {
			f := strings.Fields(step)
			if len(f) < 3 || f[0] != "install" || strings.TrimSuffix(f[len(f)-1], "/") != "/usr/local/bin" {
				continue
			}
			for i := 1; i < len(f)-1; i++ {
				if f[i] == "-m" || f[i] == "-o" || f[i] == "-g" {
					i++
					continue
				}
				if !strings.HasPrefix(f[i], "-") {
					out = append(out, f[i][strings.LastIndexByte(f[i], '/')+1:])
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("Containerfile.gpu: no `install ... /usr/local/bin/` step found")
	}
	return out
}

// TestImagesProvideEveryLaunchedProgram: every program runner/tools
// launches is in the CPU image (a package of packages.txt, or rdmabench,
// which build.sh copies in) or installed by Containerfile.gpu.
func TestImagesProvideEveryLaunchedProgram(t *testing.T) {
	pkgs, gpu := cpuPackages(t), gpuInstalled(t)
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
		case slices.Contains(gpu, prog):
		default:
			t.Errorf("%s: launched by the runner, provided by neither image (packages.txt, Containerfile.gpu)", prog)
		}
	}
}

// The GPU image also holds the CPU image's packages, so that one image
// runs every test on a GPU node.
func TestGPUImageHasTheCPUPackages(t *testing.T) {
	b, err := os.ReadFile("Containerfile.gpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cpuPackages(t) {
		if p == "ucx-utils" || p == "ca-certificates" { // UCX is built there with CUDA; the base has the certificates
			continue
		}
		if !regexp.MustCompile(`\s` + regexp.QuoteMeta(p) + `\s`).Match(b) {
			t.Errorf("Containerfile.gpu does not install %s", p)
		}
	}
}

// The test itself: a program removed from both images is caught.
func TestDriftIsCaught(t *testing.T) {
	if got := gpuInstalled(t); !slices.Contains(got, "nixlbench") || !slices.Contains(got, "sendrecv_perf") {
		t.Fatalf("GPU installs %v: want nixlbench and the nccl-tests binaries", got)
	}
	for _, prog := range []string{"nixlbench", "all_reduce_perf", "ib_write_bw", "mpirun", "sshd", "rdmabench"} {
		if !slices.Contains(launched(), prog) {
			t.Errorf("launched() misses %s", prog)
		}
	}
}
