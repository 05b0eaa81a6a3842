package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// An nccl-tests older than 2.17.3 (no --output_file in its usage) loses
// -J; a newer one, or one that cannot be asked, keeps it.
func TestNCCLJSONScript(t *testing.T) {
	dir := t.TempDir()
	usage := map[string]string{
		// 2.13's usage (no -J); 2.19's names it.
		"old_perf": "USAGE: all_reduce_perf \n\t[-t,--nthreads <num threads>] \n\t[-T,--timeout <time in seconds>] \n\t[-h,--help]\n",
		"new_perf": "USAGE: all_reduce_perf \n\t[-t,--nthreads <num threads>] \n\t[-J,--output_file <output file name>] \n\t[-h,--help]\n",
	}
	for name, u := range usage {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\ncat <<'EOF'\n"+u+"EOF\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for bin, want := range map[string]bool{"old_perf": false, "new_perf": true, "absent_perf": true} {
		cmd := exec.Command("sh", "-c", NCCLJSONScript(bin))
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if NCCLHasJSON(string(out)) != want {
			t.Errorf("%s: %q, want JSON %v", bin, out, want)
		}
	}
	shelltest.Check(t, "NCCLJSONScript", NCCLJSONScript("all_reduce_perf"))
}

func TestDropJSON(t *testing.T) {
	argv := []string{"/opt/hpcx/ompi/bin/mpirun", "--prefix", "/opt/hpcx/ompi", "-x", "PATH", "sendrecv_perf", "-b", "1", "-c", "1", "-J", "/tmp/o/nccl.json", "-n", "5"}
	if NCCLBinaryOf(argv) != "sendrecv_perf" {
		t.Fatal(NCCLBinaryOf(argv))
	}
	want := []string{"/opt/hpcx/ompi/bin/mpirun", "--prefix", "/opt/hpcx/ompi", "-x", "PATH", "sendrecv_perf", "-b", "1", "-c", "1", "-n", "5"}
	if got := DropJSON(argv); !slices.Equal(got, want) {
		t.Fatalf("%q", got)
	}
	if got := DropJSON([]string{"ib_write_bw", "-J", "x"}); len(got) != 3 {
		t.Fatalf("not nccl: %q", got)
	}
}
