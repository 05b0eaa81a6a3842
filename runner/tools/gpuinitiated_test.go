package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
	"github.com/rdmabench/rdmabench/scenarios"
)

// gpuInitiatedOn runs the readiness script on a fixture root, with its pip
// metadata on PYTHONPATH (the real python3 reads it) and a stand-in
// ldconfig listing its lib/ folder.
func gpuInitiatedOn(t *testing.T, dir string) string {
	t.Helper()
	bin := t.TempDir()
	ldconfig := "#!/bin/sh\n"
	libs, _ := filepath.Glob(filepath.Join(dir, "lib", "*"))
	for _, l := range libs {
		if fi, err := os.Lstat(l); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			ldconfig += "printf '\\t%s (libc6,x86-64) => %s\\n' '" + filepath.Base(l) + "' '" + l + "'\n"
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "ldconfig"), []byte(ldconfig), 0o755); err != nil {
		t.Fatal(err)
	}
	path := bin + ":/usr/bin:/bin"
	if py, err := exec.LookPath("python3"); err == nil {
		if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", gpuInitiatedScript)
	cmd.Env = append(os.Environ(), "PATH="+path, "RDMABENCH_FACT_ROOT="+filepath.Join(dir, "root"),
		"PYTHONPATH="+filepath.Join(dir, "site"), "PYTHONNOUSERSITE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// On each fixture root the script reads the driver's settings, modules,
// /dev/gdrdrv and the library versions, and the probe gives the pod's one
// verdict with the fix for each missing piece (README.md: provenance).
func TestGPUInitiatedOnFixtureRoots(t *testing.T) {
	_, pyErr := exec.LookPath("python3")
	for _, c := range []struct {
		dir     string
		status  ProbeStatus
		says    []string
		fixes   []string
		noFixes []string
		pip     bool
	}{
		{"h100-gpu-machine", ProbeFail,
			[]string{"GPU-initiated RDMA: none", `RegistryDwords "" (no PeerMappingOverride), GrdmaPciTopoCheckOverride 0`,
				"GPU memory registration: none (no nvidia_peermem", "/dev/gdrdrv: missing", "NVSHMEM 3.4.5",
				"NCCL 2.28.9: GIN (DeepEP V2) needs 2.30.4+", "RmProfilingAdminOnly 0"},
			[]string{"modprobe nvidia_peermem", "PeerMappingOverride=1", "gdrcopy.enabled=true"},
			[]string{"NVreg_RestrictProfilingToAdminUsers", "NVSHMEM 3.3.9+"}, true},
		{"ibgda-native", ProbePass,
			[]string{"GPU-initiated RDMA: IBGDA native", "(PeerMappingOverride on)", "registration: nvidia_peermem",
				"NVSHMEM 3.3.9", "SYS_RAWIO held", "uvm_disable_hmm Y", "NCCL not found"},
			nil, []string{"PeerMappingOverride=1", "gdrcopy"}, false},
		{"cpu-assisted", ProbeUnknown,
			[]string{"GPU-initiated RDMA: CPU-assisted", "registration: dma-buf", "/dev/gdrdrv: rw", "NVSHMEM 3.3.9",
				"does not fall back", "NCCL 2.30.4: GIN (DeepEP V2) available"},
			[]string{"PeerMappingOverride=1", "NVSHMEM 3.4.5+"}, []string{"gdrcopy.enabled", "nvidia_peermem"}, true},
	} {
		t.Run(c.dir, func(t *testing.T) {
			if c.pip && pyErr != nil {
				t.Skip("no python3 here to read the pip metadata")
			}
			out := gpuInitiatedOn(t, filepath.Join("testdata", "gpuinitiated", c.dir))
			status, ev, fix := GPUInitiatedProbe().Judge(out)
			if status != c.status {
				t.Errorf("status %v, want %v: %s", status, c.status, ev)
			}
			for _, s := range c.says {
				if !strings.Contains(ev, s) {
					t.Errorf("evidence lacks %q:\n%s\nscript output:\n%s", s, ev, out)
				}
			}
			for _, s := range c.fixes {
				if !strings.Contains(fix, s) {
					t.Errorf("fix lacks %q:\n%s", s, fix)
				}
			}
			for _, s := range c.noFixes {
				if strings.Contains(fix, s) {
					t.Errorf("fix has %q:\n%s", s, fix)
				}
			}
		})
	}
}

// A root without NVIDIA's driver: none, and the fix is a GPU.
func TestGPUInitiatedNoDriver(t *testing.T) {
	out := gpuInitiatedOn(t, t.TempDir())
	status, ev, fix := GPUInitiatedProbe().Judge(out)
	if status != ProbeFail || !strings.Contains(ev, "no NVIDIA driver") || !strings.Contains(fix, "nvidia.com/gpu") {
		t.Errorf("%v %q %q\n%s", status, ev, fix, out)
	}
}

// Only a test that asks for IBGDA (NVSHMEM's env, as llm-d sets it) gets
// the check; it passes shellcheck.
func TestGPUInitiatedAskedByEnv(t *testing.T) {
	for env, want := range map[string]bool{
		"NVSHMEM_REMOTE_TRANSPORT=ibgda": true, "NVSHMEM_IB_ENABLE_IBGDA=true": true, "NVSHMEM_IB_ENABLE_IBGDA=1": true,
		"NVSHMEM_IB_ENABLE_IBGDA=false": false, "NVSHMEM_REMOTE_TRANSPORT=ibrc": false, "": false,
	} {
		tc := &scenarios.Test{Tool: "nccl", Env: map[string]string{}}
		if k, v, ok := strings.Cut(env, "="); ok {
			tc.Env[k] = v
		}
		got := false
		for _, p := range ProbesOf(tc, "nccl") {
			got = got || p.ID == GPUInitiatedID
		}
		if got != want {
			t.Errorf("env %q: check %v, want %v", env, got, want)
		}
	}
	shelltest.Check(t, "gpuInitiatedScript", gpuInitiatedScript)
}

func TestVersionAtLeast(t *testing.T) {
	for _, c := range []struct {
		v, min string
		want   bool
	}{
		{"3.4.5", "3.3.9", true}, {"3.3.9", "3.4.5", false}, {"2.30.4+cuda13.0", "2.30.4", true},
		{"2.28.9", "2.30.4", false}, {"3.10.0", "3.4.5", true}, {"", "1", false}, {"6.8.0-1015-aws", "5.12", true},
	} {
		if got := VersionAtLeast(c.v, c.min); got != c.want {
			t.Errorf("VersionAtLeast(%q, %q) = %v", c.v, c.min, got)
		}
	}
}
