// Package e2egpu is the GPU lane (`make e2e-gpu`): on a host with NVIDIA GPUs
// and nccl-tests on the PATH, it runs the shipped single-host GPU scenario
// through rdmabench, runs the same nccl-tests commands raw, and checks that
// rdmabench reports what the raw tool measured. It is not part of `make
// test` (CI has no GPU); it skips unless RDMABENCH_E2E_GPU=1.
package e2egpu

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Tolerance on bus bandwidth per size at and above tolSizeBytes: two runs of
// the same command on one GPU host differ by run-to-run noise alone.
const (
	tolerance    = 0.02
	tolSizeBytes = 256 << 20
)

// config is the lane's environment: what to run and where to write.
type config struct {
	bin, scenario, out string
	gpus               int
}

func setup(t *testing.T) config {
	if os.Getenv("RDMABENCH_E2E_GPU") != "1" {
		t.Skip("GPU lane: set RDMABENCH_E2E_GPU=1 on a host with NVIDIA GPUs and nccl-tests on the PATH (make e2e-gpu)")
	}
	c := config{
		bin:      envOr("RDMABENCH_BIN", "../../bin/rdmabench"),
		scenario: envOr("RDMABENCH_GPU_SCENARIO", "../../scenarios/gpu-single-host.yaml"),
		out:      os.Getenv("RDMABENCH_E2E_OUT"),
	}
	if c.out == "" {
		c.out = t.TempDir()
	}
	n, err := strconv.Atoi(os.Getenv("RDMABENCH_GPUS"))
	if err != nil || n < 1 {
		n = countGPUs(t)
	}
	c.gpus = n
	return c
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func countGPUs(t *testing.T) int {
	out, err := exec.Command("nvidia-smi", "-L").Output()
	if err != nil {
		t.Fatalf("nvidia-smi -L: %v (set RDMABENCH_GPUS)", err)
	}
	return strings.Count(string(out), "GPU ")
}

var gpusLine = regexp.MustCompile(`(?m)^(\s*gpus:\s*)\d+`)

// TestSingleHostFidelity is the lane: rdmabench first, then each test's
// command raw, then the comparison, written to fidelity.txt beside the runs.
func TestSingleHostFidelity(t *testing.T) {
	c := setup(t)
	src, err := os.ReadFile(c.scenario)
	if err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(c.out, "scenario.yaml")
	if err := os.WriteFile(scen, gpusLine.ReplaceAll(src, []byte("${1}"+strconv.Itoa(c.gpus))), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(scen)
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(c.out, "rdmabench")
	start := time.Now()
	cmd := exec.Command(c.bin, "run", scen, "--out", runDir, "--html", "none")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	rbWall := time.Since(start)
	_ = os.WriteFile(filepath.Join(c.out, "rdmabench-stdout.txt"), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(c.out, "rdmabench-stderr.txt"), stderr.Bytes(), 0o644)
	if err != nil {
		t.Logf("rdmabench run: %v\n%s", err, stderr.String())
	}
	rep, err := schema.Load(filepath.Join(runDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	fmt.Fprintf(&sum, "GPU lane %s: %d GPU(s), rdmabench run %.1f s wall\n", time.Now().UTC().Format(time.RFC3339), c.gpus, rbWall.Seconds())
	var rawWall time.Duration
	for _, st := range s.Tests {
		res := findResult(rep, st.Name)
		if res == nil {
			t.Errorf("%s: no result in report.json", st.Name)
			continue
		}
		raw, wall := runRaw(t, c, &st)
		rawWall += wall
		compare(t, &sum, &st, res, raw, wall)
	}
	fmt.Fprintf(&sum, "overhead: rdmabench %.1f s wall for the whole run vs %.1f s for the raw commands (%+.1f s)\n",
		rbWall.Seconds(), rawWall.Seconds(), (rbWall - rawWall).Seconds())
	t.Log("\n" + sum.String())
	if err := os.WriteFile(filepath.Join(c.out, "fidelity.txt"), []byte(sum.String()), 0o644); err != nil {
		t.Error(err)
	}
}

func findResult(rep *schema.Report, test string) *schema.Result {
	for i := range rep.Results {
		if rep.Results[i].Test == test {
			return &rep.Results[i]
		}
	}
	return nil
}

// rawArgv is the nccl-tests command a user would type for test st: what
// rdmabench documents for one endpoint (tools.buildNCCL), written out here
// independently so that a drift in the harness's command line shows.
func rawArgv(st *scenarios.Test, gpus int) []string {
	a := st.Args
	argv := []string{a.Collective + "_perf", "-b", strconv.FormatInt(size(a.MinSize), 10),
		"-e", strconv.FormatInt(size(a.MaxSize), 10), "-f", strconv.Itoa(a.StepFactor), "-g", strconv.Itoa(gpus)}
	if a.Iterations > 0 {
		argv = append(argv, "-n", strconv.Itoa(a.Iterations))
	}
	return append(argv, "-c", "1")
}

func size(s scenarios.Size) int64 {
	if s.Bytes == 0 && s.Raw != "" {
		_ = s.Parse()
	}
	return s.Bytes
}

// runRaw runs the test's command as a user would, with the debug level
// rdmabench sets, and parses its output.
func runRaw(t *testing.T, c config, st *scenarios.Test) (parsers.Measurement, time.Duration) {
	argv := rawArgv(st, c.gpus)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	name := filepath.Join(c.out, "raw-"+st.Name+".txt")
	_ = os.WriteFile(name, out, 0o644)
	if err != nil {
		t.Errorf("%s raw: %v", strings.Join(argv, " "), err)
	}
	ms, err := parsers.ParseNCCL(bytes.NewReader(out))
	if err != nil || len(ms) == 0 {
		t.Fatalf("%s: raw output does not parse: %v", name, err)
	}
	return ms[0], wall
}

// compare checks one test: the same rows, bus bandwidth (algorithm
// bandwidth where nccl-tests defines bus bandwidth as 0, one rank) within
// the tolerance at large sizes, transport evidence on both sides.
func compare(t *testing.T, sum *strings.Builder, st *scenarios.Test, res *schema.Result, raw parsers.Measurement, rawWall time.Duration) {
	fmt.Fprintf(sum, "\n%s (%s_perf -g …): rdmabench leg %.1f s (tool %.1f s), raw %.1f s; transport %s / raw %s\n",
		st.Name, st.Args.Collective, res.Seconds, res.ToolSeconds, rawWall.Seconds(), transport(res.Transport), transport(raw.Transport))
	if res.Verdict == schema.VerdictError || len(res.Samples) == 0 {
		t.Errorf("%s: rdmabench verdict %s: %s", st.Name, res.Verdict, res.Reason)
		return
	}
	if len(res.Samples) != len(raw.Samples) {
		t.Errorf("%s: %d rows through rdmabench, %d raw", st.Name, len(res.Samples), len(raw.Samples))
	}
	if res.Transport == nil || len(res.Transport.Evidence) == 0 {
		t.Errorf("%s: no transport evidence in rdmabench's result", st.Name)
	}
	if raw.Transport == nil || len(raw.Transport.Evidence) == 0 {
		t.Errorf("%s: no transport evidence in the raw output", st.Name)
	}
	fmt.Fprintf(sum, "%14s %14s %14s %8s %s\n", "size", "rdmabench", "raw", "diff", "metric")
	for i := 0; i < len(res.Samples) && i < len(raw.Samples); i++ {
		a, b := res.Samples[i], raw.Samples[i]
		metric, va, vb := "busbw", val(a.BusBWBps), val(b.BusBWBps)
		if va == 0 && vb == 0 {
			metric, va, vb = "algbw (busbw 0: one rank)", val(a.AlgBWBps), val(b.AlgBWBps)
		}
		d := 0.0
		if vb > 0 {
			d = (va - vb) / vb
		}
		// Samples hold bits per second; nccl-tests prints GB/s.
		fmt.Fprintf(sum, "%14d %10.2f GB/s %10.2f GB/s %+7.2f%% %s\n", a.Bytes, va/8e9, vb/8e9, 100*d, metric)
		if a.Bytes != b.Bytes {
			t.Errorf("%s row %d: size %d through rdmabench, %d raw", st.Name, i, a.Bytes, b.Bytes)
		}
		if a.Bytes >= tolSizeBytes && math.Abs(d) > tolerance {
			t.Errorf("%s at %d B: %s %.2f GB/s through rdmabench, %.2f GB/s raw (%+.1f%%, tolerance %.0f%%)",
				st.Name, a.Bytes, metric, va/8e9, vb/8e9, 100*d, 100*tolerance)
		}
	}
}

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func transport(tr *parsers.Transport) string {
	if tr == nil {
		return "none"
	}
	return tr.Kind + " " + tr.Detail
}
