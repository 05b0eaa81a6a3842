package mpi

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// The prefix comes from where mpirun really is, in the layouts of the
// images people run nccl-tests from.
func TestResolveScriptLayouts(t *testing.T) {
	cases := []struct {
		name  string
		links map[string]string // path → symlink target ("" a file)
		path  string            // the folder on PATH
		want  string            // prefix, relative to the root
	}{
		{"HPC-X", map[string]string{"opt/hpcx/ompi/bin/mpirun": "", "opt/hpcx/ompi/bin/orted": ""}, "opt/hpcx/ompi/bin", "opt/hpcx/ompi"},
		{"NGC", map[string]string{"usr/local/mpi/bin/mpirun": "", "usr/local/mpi/bin/orted": ""}, "usr/local/mpi/bin", "usr/local/mpi"},
		// Debian: /usr/bin/mpirun → /etc/alternatives/mpirun → /usr/bin/mpirun.openmpi → orterun.
		{"Debian alternatives", map[string]string{"usr/bin/orterun": "", "usr/bin/mpirun.openmpi": "orterun",
			"etc/alternatives/mpirun": "../../usr/bin/mpirun.openmpi", "usr/bin/mpirun": "../../etc/alternatives/mpirun"}, "usr/bin", "usr"},
		// A symlink on PATH into the real installation (UBI images link /usr/local/bin/mpirun).
		{"linked into /usr/local/bin", map[string]string{"opt/openmpi/bin/mpirun": "", "usr/local/bin/mpirun": "../../../opt/openmpi/bin/mpirun"}, "usr/local/bin", "opt/openmpi"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			root, _ = filepath.EvalSymlinks(root)
			keys := make([]string, 0, len(tc.links))
			for k := range tc.links {
				keys = append(keys, k)
			}
			slices.Sort(keys) // files before the links that need them do not matter to ln -s
			for _, k := range keys {
				p := filepath.Join(root, k)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				var err error
				if target := tc.links[k]; target == "" {
					err = os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
				} else {
					err = os.Symlink(target, p)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sh", "-c", ResolveScript)
			cmd.Env = []string{"PATH=" + filepath.Join(root, tc.path) + ":/usr/bin:/bin"}
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			path, prefix, err := ParseResolve(string(out))
			if err != nil || path != filepath.Join(root, tc.path, "mpirun") || prefix != filepath.Join(root, tc.want) {
				t.Fatalf("%q → %s %s %v; want prefix %s", out, path, prefix, err, filepath.Join(root, tc.want))
			}
		})
	}
}

func TestResolveMissing(t *testing.T) {
	cmd := exec.Command("sh", "-c", ResolveScript)
	cmd.Env = []string{"PATH=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ParseResolve(string(out)); err == nil {
		t.Fatalf("%q: want an error", out)
	}
}

func TestPrefixArgv(t *testing.T) {
	got := PrefixArgv([]string{"mpirun", "-np", "2", "all_reduce_perf"}, "/opt/hpcx/ompi/bin/mpirun", "/opt/hpcx/ompi")
	if want := []string{"/opt/hpcx/ompi/bin/mpirun", "--prefix", "/opt/hpcx/ompi", "-np", "2", "all_reduce_perf"}; !slices.Equal(got, want) {
		t.Fatalf("%q", got)
	}
	got = PrefixArgv([]string{"mpirun", "--prefix", "/x", "-np", "2"}, "/usr/bin/mpirun", "/usr")
	if want := []string{"/usr/bin/mpirun", "--prefix", "/x", "-np", "2"}; !slices.Equal(got, want) {
		t.Fatalf("the scenario's own --prefix stands: %q", got)
	}
	if got := PrefixArgv([]string{"all_reduce_perf"}, "/usr/bin/mpirun", "/usr"); got[0] != "all_reduce_perf" {
		t.Fatalf("%q", got)
	}
}

func TestResolveScriptShellcheck(t *testing.T) {
	shelltest.Check(t, "ResolveScript", ResolveScript)
}
