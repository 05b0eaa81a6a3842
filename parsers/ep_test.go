package parsers

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// epParsers are the parsers of the expert-parallel tools' output, by the
// folder of testdata/parsers that holds their captures (README.md there:
// where each came from, and which lines are hand-written).
var epParsers = map[string]func(io.Reader) ([]Measurement, error){
	"deepep":   ParseDeepEP,
	"nvshmem":  ParseNVSHMEMPerf,
	"ep_bench": ParseEPBench,
}

// TestEPGolden parses every capture of the EP tools and compares the
// measurements with testdata/parsers/golden/<dir>/<name>.json (-update
// rewrites them; review the diff).
func TestEPGolden(t *testing.T) {
	for dir, parse := range epParsers {
		files, _ := filepath.Glob(filepath.Join("..", "testdata", "parsers", dir, "*.txt"))
		if len(files) < 3 {
			t.Fatalf("%s: only %d captures", dir, len(files))
		}
		for _, in := range files {
			t.Run(dir+"/"+filepath.Base(in), func(t *testing.T) {
				data, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				ms, err := parse(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.MarshalIndent(ms, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
				golden := filepath.Join("..", "testdata", "parsers", "golden", dir, strings.TrimSuffix(filepath.Base(in), ".txt")+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (go test ./parsers -run TestEPGolden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s (go test ./parsers -run TestEPGolden -update, then review the diff):\n%s", in, golden, got)
				}
			})
		}
	}
}

func parseFile(t *testing.T, parse func(io.Reader) ([]Measurement, error), dir, name string) []Measurement {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "parsers", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// What the golden files hold, said once in words: the figures of a line
// land in the right fields, in the right units.
func TestDeepEPFigures(t *testing.T) {
	ms := parseFile(t, ParseDeepEP, "deepep", "v1-low-latency-issue28-h800.txt")
	if len(ms) != 6 || ms[0].Side != "rank 1" || ms[0].Test != "low_latency dispatch+combine" {
		t.Fatalf("%d measurements, first %q %q", len(ms), ms[0].Side, ms[0].Test)
	}
	s := ms[0].Samples[0]
	if !near(*s.BWAvgBps, 42.24*8e9) || !near(*s.LatAvgUS, 521.97) || !near(*s.LatMinUS, 517.44) || !near(*s.LatMaxUS, 527.33) {
		t.Errorf("rank 1: %+v", s)
	}
	ms = parseFile(t, ParseDeepEP, "deepep", "v1-low-latency-issue208.txt")
	if len(ms) != 8+2*4 || ms[8].Test != "low_latency dispatch" || ms[9].Test != "low_latency combine" ||
		!near(*ms[9].Samples[0].LatAvgUS, 221.39) || ms[9].Side != "rank 21" {
		t.Errorf("split lines: %d measurements; %+v", len(ms), ms[8:10])
	}
	ms = parseFile(t, ParseDeepEP, "deepep", "v1-internode-best-issues137-344.txt")
	if len(ms) != 2 || ms[0].Test != "normal dispatch (BF16)" || !near(*ms[0].Samples[0].BWAvgBps, 24.64*8e9) ||
		ms[0].Info["nvl_GB/s"] != "81.30" || ms[0].Info["rdma_chunk"] != "20" {
		t.Errorf("best lines: %+v", ms)
	}
	ms = parseFile(t, ParseDeepEP, "deepep", "v2-test-ep-pr1234-ep16.txt")
	if len(ms) != 10 || ms[0].Test != "v2 expanded dispatch" || ms[0].Side != "rank 4" || ms[0].Ranks != 16 ||
		!near(*ms[0].Samples[0].BWAvgBps, 115*8e9) || !near(*ms[0].Samples[0].TimeUS, 1064) || ms[0].Samples[0].Bytes != 400593024 {
		t.Errorf("V2 with scale-out: %+v", ms[0])
	}
	ms = parseFile(t, ParseDeepEP, "deepep", "v2-test-ep-pr605-gb200-ep4.txt")
	if len(ms) != 9 || ms[0].Test != "v2 dispatch" || !near(*ms[0].Samples[0].BWAvgBps, 860*8e9) || ms[8].Test != "v2 cached dispatch" {
		t.Errorf("V2 scale-up only: %d; %+v", len(ms), ms[0])
	}
	ms = parseFile(t, ParseDeepEP, "deepep", "handwritten-formats.txt")
	tests := []string{}
	for _, m := range ms {
		tests = append(tests, m.Test)
	}
	want := "normal dispatch (FP8)|normal combine|normal dispatch (BF16)|normal combine|low_latency dispatch send/recv|low_latency combine send/recv|v2 combine|v2 reduced combine"
	if strings.Join(tests, "|") != want {
		t.Errorf("hand-written formats: %s", strings.Join(tests, "|"))
	}
	if !near(*ms[0].Samples[0].TimeUS, 101.25) || !near(*ms[2].Samples[0].TimeUS, 402) || ms[2].Info["notify_us"] != "18" || !near(*ms[4].Samples[0].TimeUS, 42.5) {
		t.Errorf("times: %+v %+v %+v", ms[0].Samples[0], ms[2], ms[4].Samples[0])
	}
}

// A run without a result says why, with a class; never zeros.
func TestEPFailures(t *testing.T) {
	for _, c := range []struct {
		parse     func(io.Reader) ([]Measurement, error)
		dir, name string
		class     ErrorClass
	}{
		{ParseDeepEP, "deepep", "v1-internode-tuning-sweep-issue137.txt", ClassTruncated},
		{ParseDeepEP, "deepep", "fail-traceback-handwritten.txt", ClassTimeout},
		{ParseNVSHMEMPerf, "nvshmem", "handwritten-fail-two-pes.txt", ClassUsageError},
		{ParseEPBench, "ep_bench", "handwritten-fail-mpi.txt", ClassToolError},
	} {
		ms := parseFile(t, c.parse, c.dir, c.name)
		if len(ms) != 1 || ms[0].OK || ms[0].ErrorClass != c.class {
			t.Errorf("%s: %+v; want one failure of class %s", c.name, ms, c.class)
		}
	}
	for _, parse := range epParsers {
		ms, _ := parse(strings.NewReader("hello\n"))
		if len(ms) != 1 || ms[0].ErrorClass != ClassNoResults {
			t.Errorf("unrelated text: %+v", ms)
		}
	}
}

func TestNVSHMEMFigures(t *testing.T) {
	ms := parseFile(t, ParseNVSHMEMPerf, "nvshmem", "pr599-shmem-put-bw-efa.txt")
	if len(ms) != 1 || ms[0].Test != "shmem_put_bw_uni" || ms[0].Info["scope"] != "None" || len(ms[0].Samples) != 18 ||
		ms[0].Samples[17].Bytes != 524288 || !near(*ms[0].Samples[17].BWAvgBps, 9.839648*8e9) {
		t.Errorf("%+v", ms)
	}
	ms = parseFile(t, ParseNVSHMEMPerf, "nvshmem", "issue39-reduction-on-stream.txt")
	s := ms[0].Samples[0]
	if len(ms[0].Samples) != 7 || s.Count != 2 || s.DataType != "int" || s.RedOp != "sum" || !near(*s.LatAvgUS, 7.1936) ||
		!near(*s.LatMaxUS, 7.194) || !near(*s.BusBWBps, 0.002*8e9) {
		t.Errorf("%+v", s)
	}
	ms = parseFile(t, ParseNVSHMEMPerf, "nvshmem", "pr76-efa-collective-block.txt")
	if len(ms) != 1 || ms[0].Info["scope"] != "block" || len(ms[0].Samples) != 14 || !near(*ms[0].Samples[13].AlgBWBps, 4.217*8e9) {
		t.Errorf("%+v", ms)
	}
	ms = parseFile(t, ParseNVSHMEMPerf, "nvshmem", "handwritten-machine-readable.txt")
	if len(ms) != 2 || len(ms[0].Samples) != 3 || !near(*ms[0].Samples[2].BWAvgBps, 0.122*8e9) || ms[1].Info["scope"] != "thread" ||
		!near(*ms[1].Samples[1].LatAvgUS, 3.6) || ms[1].Info["metric"] != "latency (us)" {
		t.Errorf("%+v", ms)
	}
}

// ep_bench's summaries (hand-written to its format strings: README.md).
func TestEPBenchFigures(t *testing.T) {
	ms := parseFile(t, ParseEPBench, "ep_bench", "handwritten-low-latency.txt")
	tests := []string{}
	for _, m := range ms {
		tests = append(tests, m.Test+"/"+m.Info["timing"])
	}
	want := "low_latency dispatch/host-observed performance|low_latency combine/host-observed performance|" +
		"low_latency dispatch+combine/host-observed performance|low_latency dispatch/kernel-only performance"
	if strings.Join(tests, "|") != want {
		t.Fatalf("%s", strings.Join(tests, "|"))
	}
	s := ms[0].Samples[0]
	if ms[0].Ranks != 8 || !near(*s.LatAvgUS, 120.5) || !near(*s.LatMaxUS, 125.1) || !near(*s.BusBWBps, 61.2*8e9) ||
		!near(*s.AlgBWBps, 53.1*8e9) || ms[0].Info["busbw_min_rank"] != "3" {
		t.Errorf("%+v %+v", ms[0], s)
	}
	ms = parseFile(t, ParseEPBench, "ep_bench", "handwritten-high-throughput.txt")
	if len(ms) != 3 || ms[0].Test != "high_throughput dispatch" || ms[0].Info["recipe"] != "none" || ms[0].Ranks != 16 ||
		!near(*ms[0].Samples[0].BWAvgBps, 152.3*8e9) || ms[0].Info["recv_rdma_GB/s"] != "51.10" ||
		!near(*ms[0].Samples[0].LatMinUS, 2101.2) || !near(*ms[1].Samples[0].BWAvgBps, 134.5*8e9) {
		t.Errorf("%+v", ms)
	}
}

func FuzzParseEPBench(f *testing.F) {
	fuzzSeeds(f, "ep_bench")
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, data, ParseEPBench) })
}

func FuzzParseDeepEP(f *testing.F) {
	fuzzSeeds(f, "deepep")
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, data, ParseDeepEP) })
}

func FuzzParseNVSHMEMPerf(f *testing.F) {
	fuzzSeeds(f, "nvshmem")
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, data, ParseNVSHMEMPerf) })
}

// near compares figures parsed from text with constants, to a part in 10¹².
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// TestDeepEPProbeLines: the DeepEP probe's lines (probe/deepep): the
// headline part and its bytes, the latencies, the banner's versions on
// every measurement, and a failed check as wrong data beside the results.
func TestDeepEPProbeLines(t *testing.T) {
	ms := parseFile(t, ParseDeepEP, "deepep", "probe-fail-handwritten.txt")
	if len(ms) != 3 {
		t.Fatalf("%d measurements, want 2 results and 1 failure: %+v", len(ms), ms)
	}
	d := ms[0]
	if d.Test != "normal dispatch (FP8)" || d.Side != "rank 0" || d.Tool != "rdmabench-deepep" || d.Ranks != 4 ||
		d.Samples[0].Bytes != 60000000 || *d.Samples[0].BWAvgBps != 60000000/400e-6*8 || *d.Samples[0].LatMaxUS != 410 ||
		d.Info["nvshmem"] != "3.4.5" || d.Info["nvshmem_loaded"] != "libnvshmem_host.so.3" || len(d.Warnings) != 1 {
		t.Errorf("dispatch: %+v", d)
	}
	if f := ms[2]; f.OK || f.ErrorClass != ClassDataError || !strings.Contains(f.Error, "rank 2: low_latency_combine") {
		t.Errorf("failure: %+v", f)
	}
	ms = parseFile(t, ParseDeepEP, "deepep", "probe-standin-2ranks.txt")
	if len(ms) != 8 || ms[7].Test != "low_latency combine (BF16)" || ms[7].Side != "rank 1" || ms[7].Info["kernels"] != "low_latency" {
		t.Errorf("stand-in run: %d measurements, last %+v", len(ms), ms[len(ms)-1])
	}
}

// TestDeepEPProbeOneRankMovesNothingBetweenGPUs: a run of one rank (one
// GPU) names no inter-GPU transport (as NCCL's one rank), not NVLink.
func TestDeepEPProbeOneRankMovesNothingBetweenGPUs(t *testing.T) {
	out := "# rdmabench-deepep version 1 deep_ep=1.2.1 deep_ep-api=V1 ranks=1 hosts=1\n" +
		"[rank 0] rdmabench-deepep low_latency dispatch (FP8): 10.00 GB/s, 1000 bytes, avg_t=0.10 us, min_t=0.10 us, max_t=0.10 us, path=nvshmem, tokens=16, recv_tokens=16, check=passed\n"
	ms, err := ParseDeepEP(strings.NewReader(out))
	if err != nil || len(ms) != 1 || ms[0].Transport == nil {
		t.Fatalf("%v %+v", err, ms)
	}
	if k := ms[0].Transport.Kind; k != TransportNone {
		t.Errorf("one rank: transport %q (%s), want %q", k, ms[0].Transport.Detail, TransportNone)
	}
}

// TestDeepEPTracebackAfterResultsIsAFailure: the normal kernels measured,
// then a peer died and rank 0's gather raised (torch's
// DistBackendError, uncaught: no "rdmabench-deepep:" line); the run did
// not finish, so the output holds a failure beside the results.
func TestDeepEPTracebackAfterResultsIsAFailure(t *testing.T) {
	out := "# rdmabench-deepep version 1 deep_ep=1.2.1 deep_ep-api=V1 ranks=2 hosts=1\n" +
		"[rank 0] rdmabench-deepep normal dispatch (FP8): 0.00 GB/s (RDMA), 150.00 GB/s (NVL), 0 bytes (RDMA), 60000000 bytes (NVL), avg_t=400.00 us, min_t=390.00 us, max_t=410.00 us, path=intranode, tokens=4096, recv_tokens=8000, check=passed\n" +
		"Traceback (most recent call last):\n" +
		"  File \"/tmp/rdmabench-deepep-1/rdmabench_deepep.py\", line 560, in <module>\n" +
		"torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, remote process exited or there was a network error\n"
	ms, err := ParseDeepEP(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var failure *Measurement
	for i := range ms {
		if !ms[i].OK {
			failure = &ms[i]
		}
	}
	if failure == nil || !strings.Contains(failure.Error, "DistBackendError") {
		t.Errorf("%d measurements, failure %+v: want the traceback's error beside the result", len(ms), failure)
	}
}

// TestDeepEPProbeCutShortIsAFailure: rank 0 killed (the OOM killer, a
// lost pod) after the normal kernels of a "both" run: no failure line, no
// traceback, but fewer result lines than its configuration and ranks
// promise; the output holds a failure beside them.
func TestDeepEPProbeCutShortIsAFailure(t *testing.T) {
	out := "# rdmabench-deepep version 1 deep_ep=1.2.1 deep_ep-api=V1 ranks=2 hosts=1\n" +
		"# config: mode=both hidden=7168 topk=8 experts=256 tokens=4096 ll-tokens=128 dtype=fp8 sms=24 warmup=50 iterations=50\n"
	for _, r := range []string{"0", "1"} {
		for _, ph := range []string{"dispatch (FP8)", "combine (BF16)"} {
			out += "[rank " + r + "] rdmabench-deepep normal " + ph + ": 0.00 GB/s (RDMA), 150.00 GB/s (NVL), 0 bytes (RDMA), 60000000 bytes (NVL), avg_t=400.00 us, min_t=390.00 us, max_t=410.00 us, path=intranode, tokens=4096, recv_tokens=8000, check=passed\n"
		}
	}
	ms, err := ParseDeepEP(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if last := ms[len(ms)-1]; last.OK || last.ErrorClass != ClassTruncated || !strings.Contains(last.Error, "4 of 8") {
		t.Errorf("%d measurements, last %+v: want a truncated run (4 of 8 result lines)", len(ms), last)
	}
	ms, _ = ParseDeepEP(strings.NewReader(strings.Replace(out, "mode=both", "mode=normal", 1)))
	for _, m := range ms {
		if !m.OK {
			t.Errorf("mode normal, every line there: %+v", m)
		}
	}
}
