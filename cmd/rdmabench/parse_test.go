package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/units"
)

func testdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "parsers"}, parts...)...)
}

// golden reads the parsers' golden measurements of a capture.
func golden(t *testing.T, fam, name string) []parsers.Measurement {
	t.Helper()
	b, err := os.ReadFile(testdata("golden", fam, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ms []parsers.Measurement
	if err := json.Unmarshal(b, &ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runWith(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestParseCmdJSONObjectAndArray(t *testing.T) {
	code, out, stderr := runCLI(t, "", "parse", testdata("ucx_perftest", "tag_bw_64k_client.txt"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var one parsers.Measurement
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatalf("one measurement should print one object: %v\n%s", err, out)
	}
	if want := golden(t, "ucx_perftest", "tag_bw_64k_client"); !reflect.DeepEqual([]parsers.Measurement{one}, want) {
		t.Errorf("got %+v, want %+v", one, want)
	}

	code, out, _ = runCLI(t, "", "parse", testdata("perftest", "write_bw_bidir_report_both_gbits.txt"),
		testdata("iperf3", "refused.json"))
	var many []parsers.Measurement
	if err := json.Unmarshal([]byte(out), &many); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: several tables should print an array:\n%s", code, err, out)
	}
	want := append(golden(t, "perftest", "write_bw_bidir_report_both_gbits"), golden(t, "iperf3", "refused")...)
	if !reflect.DeepEqual(many, want) {
		t.Errorf("array differs from the goldens:\n%s", out)
	}
}

func TestParseCmdTable(t *testing.T) {
	code, out, stderr := runCLI(t, "", "parse", "-o", "table", "--tool", "ucx_perftest",
		testdata("ucx_perftest", "tag_bw_64k_client.txt"), testdata("ucx_perftest", "connect_refused_client.txt"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bw := *golden(t, "ucx_perftest", "tag_bw_64k_client")[0].Samples[0].BWAvgBps
	for _, want := range []string{"RESULT", "tag_bw_64k_client.txt", units.FormatRate(bw), "connection_failed", "Connection refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestParseCmdStdin(t *testing.T) {
	text := "ping data: rdma-ping-0: ABC\nping data: rdma-ping-1: BCD\n"
	code, out, _ := runCLI(t, text, "parse", "--tool", "rping", "-")
	var m parsers.Measurement
	if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || !m.OK || m.Pings == nil || *m.Pings != 2 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
}

func TestParseCmdErrors(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(unknown, []byte("nothing a tool printed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"unknown tool", []string{"parse", "--tool", "ib_wirte_bw", unknown}, []string{`unknown tool "ib_wirte_bw"`, "ib_write_bw", "ucx_perftest", "iperf3"}},
		{"undetectable", []string{"parse", unknown}, []string{"notes.txt", "--tool"}},
		{"missing file", []string{"parse", filepath.Join(dir, "absent.log")}, []string{"absent.log"}},
		{"no file", []string{"parse"}, []string{"FILE"}},
		{"bad output", []string{"parse", "-o", "yaml", unknown}, []string{"yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, "", c.args...)
			if code != exitUsage || out != "" {
				t.Fatalf("exit %d, stdout %q; want %d and nothing on stdout", code, out, exitUsage)
			}
			for _, want := range c.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
		})
	}
}

// TestParseCommandNarrowsUCXPerftest: ucx_perftest's output names neither
// its test nor its sizes; --command, the line that ran it, gives both, as
// the runner knows them from the plan: run6's "-t ucp_get -m cuda" reads
// over cuda_ipc (its own RMA table), not the tcp of its control writes.
func TestParseCommandNarrowsUCXPerftest(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "gpu", "h100-kv-gpu2gpu", "run6-triage", "ucx-get-tls-cudaipc.txt")
	code, out, errs := runCLI(t, "", "parse", "--tool", "ucx_perftest", file)
	if code != 0 || !strings.Contains(out, `"kind": "tcp"`) {
		t.Fatalf("without --command: exit %d %s\n%s", code, errs, out)
	}
	for _, args := range [][]string{
		{"parse", "--tool", "ucx_perftest", "--command", "ucx_perftest 10.0.0.2 -t ucp_get -m cuda -s 1048576", file},
		{"parse", "--command", "/opt/ucx/bin/ucx_perftest -tucp_get -mcuda -s1048576 10.0.0.2", file}, // the tool from the command
	} {
		code, out, errs := runCLI(t, "", args...)
		var m parsers.Measurement
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("%v: exit %d %s\n%s", args, code, errs, out)
		}
		if m.Transport == nil || m.Transport.Kind != parsers.TransportP2P || !strings.HasPrefix(m.Transport.Detail, "cuda_ipc (READ cuda<-cuda)") {
			t.Errorf("%v: transport %+v, want cuda_ipc", args, m.Transport)
		}
		if len(m.Samples) != 1 || m.Samples[0].Bytes != 1048576 {
			t.Errorf("%v: samples %+v, want one of 1048576 B", args, m.Samples)
		}
	}
	if code, _, errs := runCLI(t, "", "parse", "--tool", "ib_write_bw", "--command", "ucx_perftest -t ucp_get", file); code != 2 || !strings.Contains(errs, "--command runs ucx_perftest, --tool says ib_write_bw") {
		t.Errorf("a command of another tool: exit %d %s", code, errs)
	}
}

// TestParseCommandQuotes: --command splits as a shell would ('…', "…",
// \ ), an unclosed quote or an empty --command is refused.
func TestParseCommandQuotes(t *testing.T) {
	for line, want := range map[string][]string{
		`ucx_perftest 10.0.0.2 -t 'ucp_get' -m cuda -s "1048576"`: {"ucx_perftest", "10.0.0.2", "-t", "ucp_get", "-m", "cuda", "-s", "1048576"},
		`a "b c" d\ e 'f"g'`: {"a", "b c", "d e", `f"g`},
		``:                   nil,
	} {
		got, err := shellWords(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q %v, want %q", line, got, err, want)
		}
	}
	file := filepath.Join("..", "..", "testdata", "gpu", "h100-kv-gpu2gpu", "run6-triage", "ucx-get-tls-cudaipc.txt")
	code, out, errs := runCLI(t, "", "parse", "--command", `ucx_perftest 10.0.0.2 -t 'ucp_get' -m cuda -s '1048576'`, file)
	var m parsers.Measurement
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.Transport == nil || m.Transport.Kind != parsers.TransportP2P || m.Samples[0].Bytes != 1048576 {
		t.Errorf("quoted: exit %d %s\n%s", code, errs, out)
	}
	for _, bad := range []string{`ucx_perftest -t 'ucp_get`, ``} {
		if code, _, errs := runCLI(t, "", "parse", "--command", bad, file); code != 2 || !strings.Contains(errs, "--command") {
			t.Errorf("--command %q: exit %d %s", bad, code, errs)
		}
	}
}
