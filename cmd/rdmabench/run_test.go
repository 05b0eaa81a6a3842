package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner"
)

// tcpScenario is a local scenario of TCP-capable tests (ucx_perftest over
// UCX_TLS=tcp, iperf3) plus an RDMA-only rping, skipped without RDMA.
const tcpScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: run-tcp
backend: local
lineRate: 100Gb/s
pools:
  - name: a
  - name: b
tests:
  - name: rping
    tool: rping
    from: a
    to: b
    args: {count: 3}
  - name: ucx-tcp
    tool: ucx_perftest
    from: a
    to: b
    args: {test: tag_bw, transports: tcp, sizes: [64KiB], iterations: 500}
    expect: {minBandwidth: 1Mb/s}
  - name: iperf3
    tool: iperf3
    from: a
    to: b
    args: {duration: %s}
    expect: {minBandwidth: 1Mb/s}
`

func writeRunScenario(t *testing.T, iperfDuration string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run-tcp.yaml")
	if err := os.WriteFile(p, []byte(fmt.Sprintf(tcpScenario, iperfDuration)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func needTCPTools(t *testing.T) {
	t.Helper()
	for _, b := range []string{"ucx_perftest", "iperf3"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed (./.ci/setup installs ucx-utils and iperf3)", b)
		}
	}
}

// portOffset keeps this test's ports away from the defaults other tests
// and other runs on the host use.
func portOffset() string { return strconv.Itoa(20000 + rand.IntN(20000)) }

// TestRunCommandEndToEnd: `rdmabench run` with the real tools, through the
// CLI: exit 0, a results folder, report.json with the tools' figures,
// rping skipped for want of RDMA.
func TestRunCommandEndToEnd(t *testing.T) {
	needTCPTools(t)
	out := filepath.Join(t.TempDir(), "res")
	var stdout, stderr bytes.Buffer
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code := runWith([]string{"run", writeRunScenario(t, "1s"), "--out", out, "--port-offset", portOffset(), "--junit", junit}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	rep, err := schema.Load(filepath.Join(out, runner.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	rdma, _ := runner.DetectRDMA()
	byTest := map[string]schema.Result{}
	for _, r := range rep.Results {
		byTest[r.Test] = r
	}
	for _, name := range []string{"ucx-tcp", "iperf3"} {
		if r := byTest[name]; r.Verdict != schema.VerdictPass || r.BestBps <= 0 || r.Efficiency == nil {
			t.Errorf("%s: %s %q best %v", name, r.Verdict, r.Reason, r.BestBps)
		}
	}
	if r := byTest["rping"]; !rdma && (r.Verdict != schema.VerdictSkipped || !strings.Contains(r.Reason, "RDMA")) {
		t.Errorf("rping without RDMA: %s %q", r.Verdict, r.Reason)
	}
	for _, f := range []string{runner.ScenarioFile, runner.PlanFile, runner.ResultsFile, "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), `<testsuite name="ucx-tcp"`) {
		t.Errorf("--junit: %v\n%s", err, x)
	}
	if !strings.Contains(stdout.String(), "pass") || !strings.Contains(stderr.String(), "ucx-tcp") {
		t.Errorf("summary or progress missing:\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}
}

func TestRunDryRunPrintsPlan(t *testing.T) {
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	code := runWith([]string{"run", writeRunScenario(t, "1s"), "--dry-run", "--out", filepath.Join(dir, "res")}, nil, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "ucx_perftest") {
		t.Fatalf("exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "res")); !os.IsNotExist(err) {
		t.Error("--dry-run created the results folder")
	}
	if strings.Contains(stdout.String(), "iperf3 -s") || !strings.Contains(stdout.String(), "estimated time") {
		t.Errorf("--dry-run (-o table) is plan's summary, as plan -o table:\n%s", stdout.String())
	}
	stdout.Reset()
	code = runWith([]string{"run", writeRunScenario(t, "1s"), "--dry-run", "-o", "commands"}, nil, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "iperf3 -s") {
		t.Errorf("--dry-run -o commands: exit %d\n%s", code, stdout.String())
	}
}

func TestRunBadScenarioExit2(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(p, []byte("apiVersion: rdmabench.io/v1alpha1\nkind: Scenario\nmetadata: {name: x}\npools: []\ntests: []\nbogus: 1\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if code := runWith([]string{"run", p}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "bad.yaml:") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// TestRunSIGINT: a child `rdmabench run` gets SIGINT while its second test
// runs: exit 130, report.json with the finished result and interrupted,
// and every tool process it had started is gone.
func TestRunSIGINT(t *testing.T) {
	needTCPTools(t)
	bin := filepath.Join(t.TempDir(), "rdmabench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out := filepath.Join(t.TempDir(), "res")
	cmd := exec.Command(bin, "run", writeRunScenario(t, "60s"), "--out", out, "--port-offset", portOffset())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	var tools []int
	deadline := time.Now().Add(90 * time.Second)
	for len(tools) < 2 { // iperf3 server and client of the 60 s test
		if time.Now().After(deadline) {
			t.Fatalf("iperf3 never started; stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
		if lines(filepath.Join(out, runner.ResultsFile)) >= 2 {
			tools = childrenNamed(cmd.Process.Pid, "iperf3")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		_ = err // how it ended is read below
	case <-time.After(45 * time.Second):
		t.Fatalf("rdmabench did not exit within 45s of SIGINT; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	rep, err := schema.Load(filepath.Join(out, runner.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Run.Interrupted || len(rep.Results) != 2 {
		t.Fatalf("interrupted=%v with %d results (want the skipped rping and the finished ucx-tcp)", rep.Run.Interrupted, len(rep.Results))
	}
	for _, pid := range tools {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("iperf3 pid %d still alive after rdmabench exited", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func lines(path string) int {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte("\n"))
}

// childrenNamed lists the pids whose parent is ppid and command is name.
func childrenNamed(ppid int, name string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		// pid (comm) state ppid …
		open, close := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(line[close+1:])
		if line[open+1:close] == name && len(fields) > 1 && fields[1] == strconv.Itoa(ppid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRunOutHoldingARunExit2: --out naming a folder that holds a run is a
// usage error (exit 2) before anything runs; the old run is untouched.
func TestRunOutHoldingARunExit2(t *testing.T) {
	out := t.TempDir()
	old := []byte(`{"schemaVersion":"rdmabench.io/report/v1"}`)
	if err := os.WriteFile(filepath.Join(out, runner.ReportFile), old, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runWith([]string{"run", writeRunScenario(t, "1s"), "--out", out}, nil, &stdout, &stderr)
	if want := "--out " + out + " already holds a run (report.json)"; code != 2 || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %d, want 2 and %q in stderr:\n%s", code, want, stderr.String())
	}
	if got, _ := os.ReadFile(filepath.Join(out, runner.ReportFile)); !bytes.Equal(got, old) {
		t.Errorf("report.json of the earlier run changed: %s", got)
	}
	if _, err := os.Stat(filepath.Join(out, runner.ResultsFile)); err == nil {
		t.Error("results.jsonl written although the run was refused")
	}
}

// TestRunThatMeasuredNothing: on a host without RDMA a scenario of RDMA
// tests only measures nothing; `run` exits 5 (not 0) with the reason,
// JUnit lists the skips, and --allow-empty accepts it.
func TestRunThatMeasuredNothing(t *testing.T) {
	if ok, _ := runner.DetectRDMA(); ok {
		t.Skip("this host has an RDMA device: the tests would run")
	}
	scenario := filepath.Join(t.TempDir(), "rdma-only.yaml")
	doc := strings.SplitN(tcpScenario, "  - name: ucx-tcp", 2)[0]
	if err := os.WriteFile(scenario, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	var stdout, stderr bytes.Buffer
	code := runWith([]string{"run", scenario, "--out", filepath.Join(t.TempDir(), "res"), "--html", "none", "--junit", junit}, nil, &stdout, &stderr)
	if code != 5 || !strings.Contains(stderr.String(), "nothing was measured") || !strings.Contains(stderr.String(), "--allow-empty") {
		t.Fatalf("exit %d, want 5 and the reason\nstderr:\n%s", code, stderr.String())
	}
	if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), `skipped="1"`) || !strings.Contains(string(x), "<skipped") {
		t.Errorf("JUnit must show the skip: %v\n%s", err, x)
	}
	stderr.Reset()
	code = runWith([]string{"run", scenario, "--out", filepath.Join(t.TempDir(), "res"), "--html", "none", "--allow-empty"}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("--allow-empty: exit %d\n%s", code, stderr.String())
	}
}

// TestRunNoRDMASaysWhyOnce: on a host without RDMA, the only preflight
// lines are the missing device (once per endpoint), the reason the RDMA
// test is skipped; rping's own binary is no failure of its own, and the
// skip reason says the missing device once.
func TestRunNoRDMASaysWhyOnce(t *testing.T) {
	needTCPTools(t)
	if ok, _ := runner.DetectRDMA(); ok {
		t.Skip("this host has RDMA")
	}
	out := filepath.Join(t.TempDir(), "res")
	var stdout, stderr bytes.Buffer
	if code := runWith([]string{"run", writeRunScenario(t, "1s"), "--out", out, "--port-offset", portOffset()}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for _, s := range []string{stdout.String(), stderr.String()} {
		if strings.Contains(s, "binary-rping") {
			t.Errorf("binary-rping reported though rping's test is skipped for the device:\n%s", s)
		}
	}
	if n := strings.Count(stderr.String(), "preflight FAIL"); n != 2 {
		t.Errorf("%d preflight FAIL lines, want 2 (rdma-device on a-0 and b-0):\n%s", n, stderr.String())
	}
	rep, err := schema.Load(filepath.Join(out, runner.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Test == "rping" && strings.Count(r.Reason, "RDMA device") != 1 {
			t.Errorf("rping's reason names the missing device %d times: %q", strings.Count(r.Reason, "RDMA device"), r.Reason)
		}
	}
}
