package preflight

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Preflight's facts script passes shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	// ulimit -l is not POSIX (SC3045), but dash and busybox sh have it,
	// and a shell without it reports no memlock, which preflight says.
	shelltest.Check(t, "FactsScript", FactsScript, "SC3045")
}

// The tool probes, run together as preflight runs them, pass shellcheck.
func TestProbeScriptPassesShellcheck(t *testing.T) {
	probes := tools.ProbesOf(&scenarios.Test{Tool: "nixlbench"}, "nixlbench")
	shelltest.Check(t, "ProbeScript", ProbeScript(probes))
}

// The facts script reads UCX's version from `ucx_info -v` (both forms UCX
// prints: Debian's 1.13 and the 1.22 NIXL was built with, their first
// lines as captured) and NCCL's from the file libnccl.so.2 resolves to,
// with stand-in ucx_info and ldconfig on PATH.
func TestFactsScriptReadsLibraryVersions(t *testing.T) {
	for _, tc := range []struct{ ucxFirstLine, want string }{
		{"# Version 1.13.1", "1.13.1"},          // ucx-utils 1.13.1, Debian bookworm, this machine
		{"# Library version: 1.22.0", "1.22.0"}, // testdata/gpu/2026-11-25-h200-nixl-ucx/facts/ucx_info-v.txt
	} {
		bin, lib := t.TempDir(), t.TempDir()
		write := func(name, body string) {
			if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write("ucx_info", `[ "$1" = -v ] && printf '%s\n' '`+tc.ucxFirstLine+`' "# Git branch '<unknown>', revision 0000000"`)
		if err := os.WriteFile(filepath.Join(lib, "libnccl.so.2.27.3"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("libnccl.so.2.27.3", filepath.Join(lib, "libnccl.so.2")); err != nil {
			t.Fatal(err)
		}
		write("ldconfig", `printf '\tlibnccl.so.2 (libc6,x86-64) => %s\n' '`+lib+`/libnccl.so.2'`)
		cmd := exec.Command("sh", "-c", FactsScript)
		cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		f := ParseFacts(string(out))
		if f.UCXVersion != tc.want || f.NCCLVersion != "2.27.3" {
			t.Errorf("%q: ucx %q, nccl %q; want %s, 2.27.3\n%s", tc.ucxFirstLine, f.UCXVersion, f.NCCLVersion, tc.want, out)
		}
	}
}

// ReadScript, preflight's one exec per endpoint, passes shellcheck, and its
// output on this host splits into every part: the facts as FactsScript
// alone gives them, discovery's sysfs lines, the probes by id.
func TestReadScriptIsEveryPartInOne(t *testing.T) {
	probes := tools.ProbesOf(&scenarios.Test{Tool: "nixlbench"}, "nixlbench")
	script := ReadScript(probes)
	shelltest.Check(t, "ReadScript", script, "SC3045", "SC2125", "SC2086")
	out, err := exec.Command("sh", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := SplitRead(string(out))
	alone, err := exec.Command("sh", "-c", FactsScript).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !got.Complete || got.Facts != string(alone) {
		t.Errorf("complete %v; facts part:\n%s\nFactsScript alone:\n%s", got.Complete, got.Facts, alone)
	}
	if ps := ParseProbes(got.Probes); len(ps) != len(probes) {
		t.Errorf("%d probes in the output, %d run:\n%s", len(ps), len(probes), got.Probes)
	}
	if cut := SplitRead(string(out[:strings.Index(string(out), sectionMarker+"probes")])); cut.Complete {
		t.Error("an output cut short reads as complete")
	}
}

// A ucx_info that hangs costs its own fact only, and is not left behind;
// UCX's oldest version line (# UCT version=…) is read; of two libnccl.so.2
// in the loader's cache, the first (the one loaded) is the version.
func TestFactsScriptHangingToolAndOldFormats(t *testing.T) {
	bin, lib := t.TempDir(), t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"2.18.3", "2.27.3"} {
		dir := filepath.Join(lib, v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "libnccl.so."+v), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("libnccl.so."+v, filepath.Join(dir, "libnccl.so.2")); err != nil {
			t.Fatal(err)
		}
	}
	write("ldconfig", `printf '\tlibnccl.so.2 (libc6,x86-64) => %s\n' '`+lib+`/2.18.3/libnccl.so.2' '`+lib+`/2.27.3/libnccl.so.2'`)
	run := func(env ...string) Facts {
		t.Helper()
		cmd := exec.Command("sh", "-c", FactsScript)
		cmd.Env = append(os.Environ(), append(env, "PATH="+bin+":/usr/bin:/bin")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return ParseFacts(string(out))
	}
	write("ucx_info", `echo '# UCT version=1.9.0 revision 1d0a420'`)
	if f := run(); f.UCXVersion != "1.9.0" || f.NCCLVersion != "2.18.3" || f.Kernel == "" {
		t.Errorf("ucx %q nccl %q kernel %q; want 1.9.0, 2.18.3 and the kernel", f.UCXVersion, f.NCCLVersion, f.Kernel)
	}
	write("ucx_info", `sleep 29.37`) // an odd duration marks it in ps
	if f := run("RDMABENCH_FACT_TIMEOUT=1"); f.UCXVersion != "" || f.Kernel == "" || f.NCCLVersion != "2.18.3" {
		t.Errorf("with ucx_info hanging: ucx %q kernel %q nccl %q; want only the UCX fact lost", f.UCXVersion, f.Kernel, f.NCCLVersion)
	}
	if out, _ := exec.Command("pgrep", "-f", "sleep 29.37|"+bin).Output(); len(out) > 0 {
		t.Errorf("the hung ucx_info outlived the script: pids %s", out)
	}
}
