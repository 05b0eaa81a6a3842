package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// Each image check's verdict on the outputs its script prints (those of
// the real NIXL build are in test/e2enixl: TestImageProbesOnTheRealBuild).
func TestImageCheckVerdicts(t *testing.T) {
	for _, c := range []struct {
		probe  Probe
		out    string
		status ProbeStatus
		says   string
	}{
		{BinaryProbe("ib_write_bw", installPerftest), "/usr/bin/ib_write_bw\n", ProbePass, "ib_write_bw at /usr/bin/ib_write_bw"},
		{BinaryProbe("ib_write_bw", installPerftest), "missing\n", ProbeFail, "ib_write_bw is not on PATH"},
		{NixlPluginProbe("UCCL"), "dir=/opt/nixl/lib/plugins\nhas=UCX\nhas=LIBFABRIC\n", ProbeFail, "no UCCL plugin in /opt/nixl/lib/plugins (it has UCX, LIBFABRIC)"},
		{NixlPluginProbe("UCCL"), "dir=/p\nhas=UCCL\nplugin=/p/libplugin_UCCL.so\nunresolved=libuccl_p2p.so\n", ProbeFail, "/p/libplugin_UCCL.so cannot load: libuccl_p2p.so not found"},
		{NixlPluginProbe("UCX"), "dir=/p\nhas=UCX\nplugin=/p/libplugin_UCX.so\n", ProbePass, "NIXL plugin UCX at /p/libplugin_UCX.so"},
		{NixlPluginProbe("UCX"), "dir=\n", ProbeUnknown, "plugin folder is unknown"},
		{NixlPluginProbe("UCX"), "dir=/p\n", ProbeUnknown, "no plugin in /p"},
		{UCXTransportProbe(UCXNeedsCUDA), "ucx_info=/u\ntl=cuda_copy\ntl=tcp\n", ProbePass, "UCX has cuda_copy"},
		{UCXTransportProbe(UCXNeedsCUDA), "ucx_info=/u\ntl=tcp\nmodule=ib\n", ProbeFail, "UCX offers no cuda_copy (has tcp)"},
		{UCXTransportProbe(UCXNeedsRDMA), "ucx_info=/u\ntl=tcp\nmodule=ib\n", ProbePass, "built with its ib module"},
		{UCXTransportProbe(UCXNeedsCUDA), "ucx_info=/u\ntl=tcp\nmodule=ib\nmodule=cuda\nmoddir=/p/lib/ucx\nmodfile=libuct_cuda.so.0\n", ProbePass, "built with its cuda module (no device"},
		{UCXTransportProbe(UCXNeedsCUDA), "ucx_info=/u\ntl=tcp\nmodule=cuda\nmoddir=/p/lib/ucx\nmodfile=libuct_ib.so.0\n", ProbeFail, "/p/lib/ucx has no libuct_cuda.so (has libuct_ib.so.0)"},
		{UCXTransportProbe(UCXNeedsCUDA), "ucx_info=/u\ntl=tcp\nmodule=cuda\nmoddir=/p/lib/ucx\nmodfile=libuct_cuda.so\ngpu=/dev/nvidia0\n", ProbeFail, "although /dev/nvidia0 is present"},
		{UCXTransportProbe(UCXNeedsRDMA), "ucx_info=/u\ntl=tcp\nmodule=ib\nrdmadev=mlx5_0\n", ProbeFail, "none of rc_verbs/rc_mlx5/dc_mlx5/ud_verbs/ud_mlx5 although mlx5_0 is present"},
		{UCXTransportProbe(UCXNeedsRDMA), "ucx_info=missing\n", ProbeUnknown, "ucx_info is not on PATH"},
		// ucx_info that does not run says nothing of UCX's modules.
		{UCXTransportProbe(UCXNeedsRDMA), "ucx_info=/u\nucx_info_error=/u: error while loading shared libraries: libucs.so.0\nmodule=ib\nrdmadev=rxe0\n", ProbeFail,
			"/u -d failed: /u: error while loading shared libraries: libucs.so.0"},
		{PerftestCUDAProbe("ib_write_bw"), "cuda=no\n", ProbeFail, "built without CUDA"},
		{PerftestCUDAProbe("ib_write_bw"), "cuda=yes\n", ProbePass, "offers --use_cuda"},
		{NCCLLoadsProbe("all_reduce_perf"), "nccl=notfound\n", ProbeFail, "cannot load libnccl"},
		{NCCLLoadsProbe("all_reduce_perf"), "nccl=/usr/lib/libnccl.so.2\n", ProbePass, "loads /usr/lib/libnccl.so.2"},
	} {
		status, evidence, _ := c.probe.Judge(c.out)
		if status != c.status || !strings.Contains(evidence, c.says) {
			t.Errorf("%s on %q: %v %q; want %v %q", c.probe.ID, c.out, status, evidence, c.status, c.says)
		}
	}
}

// The checks' scripts pass shellcheck, and the perftest one reads a real
// --help (where a perftest is installed here).
func TestImageCheckScripts(t *testing.T) {
	for _, p := range []Probe{BinaryProbe("ib_write_bw", ""), NixlPluginProbe("UCX"), UCXTransportProbe(UCXNeedsCUDA),
		PerftestCUDAProbe("ib_write_bw"), NCCLLoadsProbe("all_reduce_perf")} {
		shelltest.Check(t, p.ID, p.Script)
	}
	// A ucx_info that cannot start: the script says so, the check names it.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ucx_info"), []byte("#!/bin/sh\necho \"ucx_info: error while loading shared libraries: libucs.so.0\" >&2\nexit 127\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", UCXTransportProbe(UCXNeedsRDMA).Script)
	cmd.Env = append(os.Environ(), "PATH="+dir+":/usr/bin:/bin")
	out, _ := cmd.Output()
	if s, ev, _ := UCXTransportProbe(UCXNeedsRDMA).Judge(string(out)); s != ProbeFail || !strings.Contains(ev, "-d failed: ucx_info: error while loading shared libraries") {
		t.Errorf("a ucx_info that cannot start: %v %q (script said %q)", s, ev, out)
	}
	if _, err := exec.LookPath("ib_write_bw"); err != nil {
		t.Skip("no perftest here")
	}
	out, _ = exec.Command("sh", "-c", PerftestCUDAProbe("ib_write_bw").Script).Output()
	if s, ev, _ := PerftestCUDAProbe("ib_write_bw").Judge(string(out)); s == ProbeUnknown {
		t.Errorf("Debian's ib_write_bw: %s", ev)
	}
}
