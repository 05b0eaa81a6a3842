package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseUnknownToolSuggests: --tool with a near name says which one.
func TestParseUnknownToolSuggests(t *testing.T) {
	for _, c := range []struct{ tool, want string }{
		{"iperf", `did you mean "iperf3"?`},
		{"ib-write-bw", `did you mean "ib_write_bw"?`},
		{"allreduce_perf", `did you mean "all_reduce_perf"?`},
	} {
		code, _, stderr := runCLI(t, "x", "parse", "--tool", c.tool, "-")
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "known tools:") {
			t.Errorf("--tool %s: exit %d, stderr %q; want exit 2 and %s", c.tool, code, stderr, c.want)
		}
	}
}

// TestScenarioByName: a shipped scenario's name works from any folder;
// scenarios/NAME.yaml in the working folder is preferred (the user may have
// edited it); an unknown name says where it looked and the nearest name.
func TestScenarioByName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, stderr := runCLI(t, "", "validate", "pd-disagg")
	if code != 0 || !strings.Contains(out+stderr, "pd-disagg") {
		t.Fatalf("validate pd-disagg (embedded): exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, "", "plan", "loopback")
	if code != 0 || !strings.Contains(out, "iperf3") {
		t.Fatalf("plan loopback (embedded): exit %d\n%s%s", code, out, stderr)
	}

	// A local scenarios/NAME.yaml wins over the embedded one.
	if err := os.MkdirAll("scenarios", 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "apiVersion: rdmabench.io/v1alpha1\nkind: Scenario\nmetadata: {name: loopback}\n"
	if err := os.WriteFile(filepath.Join("scenarios", "loopback.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "", "validate", "loopback")
	if code != 2 || !strings.Contains(stderr, filepath.Join("scenarios", "loopback.yaml")+":1:1") {
		t.Errorf("validate loopback with ./scenarios/loopback.yaml: exit %d, want 2 naming that file\n%s", code, stderr)
	}

	code, _, stderr = runCLI(t, "", "run", "--dry-run", "pd-disag")
	for _, want := range []string{"pd-disag", `looked for "pd-disag", "scenarios/pd-disag.yaml"`, "shipped", `did you mean "pd-disagg"?`} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("run pd-disag: exit %d, want 2 and %q in\n%s", code, want, stderr)
		}
	}
}

// TestParseTableTransport: the transport the output proves is a column,
// "kind (detail)", blank where the output says nothing of it.
func TestParseTableTransport(t *testing.T) {
	code, out, stderr := runCLI(t, "", "parse", "-o", "table",
		filepath.Join("..", "..", "testdata", "parsers", "nccl-tests", "h200x2", "all_reduce_g2_debug_info.txt"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "TRANSPORT") || !strings.Contains(out, "p2p (P2P/direct pointer)") {
		t.Errorf("no transport column:\n%s", out)
	}
	code, out, _ = runCLI(t, "", "parse", "-o", "table", "--tool", "ucx_perftest", testdata("ucx_perftest", "tag_bw_64k_client.txt"))
	if code != 0 || !strings.Contains(out, "TRANSPORT") {
		t.Errorf("no transport column for ucx_perftest:\n%s", out)
	}
}

// TestParseTableFitsColumns: COLUMNS bounds the table's width.
func TestParseTableFitsColumns(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	code, out, _ := runCLI(t, "", "parse", "-o", "table", "--tool", "ucx_perftest", testdata("ucx_perftest", "connect_refused_client.txt"))
	if code != 0 {
		t.Fatal(code)
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("a line of %d columns with COLUMNS=100: %s", n, line)
		}
	}
}
