package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
)

// The fixtures build realistic reports (what a run on a 400 Gb/s RoCE fabric
// produces) with deterministic noise, so that golden files stay stable.
// `go test ./report -run TestFixtures -update` rewrites testdata/report/.

const ndr = 400e9

var fixtureStart = time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)

// fixtureBuilder carries the noise source and the clock of one report.
type fixtureBuilder struct {
	rng   *rand.Rand
	clock time.Time
	job   int
}

func newBuilder(seed uint64) *fixtureBuilder {
	return &fixtureBuilder{rng: rand.New(rand.NewPCG(seed, 7)), clock: fixtureStart}
}

func (b *fixtureBuilder) noise(rel float64) float64 { return 1 + rel*(2*b.rng.Float64()-1) }

func (b *fixtureBuilder) next(seconds float64) time.Time {
	t := b.clock
	b.clock = b.clock.Add(time.Duration(seconds * float64(time.Second)))
	return t
}

// sweep is powers of two from lo to hi bytes.
func sweep(lo, hi int64) []int64 {
	var s []int64
	for v := lo; v <= hi; v *= 2 {
		s = append(s, v)
	}
	return s
}

// bwCurve is the usual shape of bandwidth versus message size: small
// messages are latency bound, large ones reach the peak.
func bwCurve(peak float64, half, bytes int64) float64 {
	return peak * float64(bytes) / float64(bytes+half)
}

// repeated measures reps repetitions of a sweep and folds them into the
// result's samples, repetitions and stats.
func (b *fixtureBuilder) repeated(res *Result, reps int, sizes []int64, one func(bytes int64) parsers.Sample, metric parsers.Metric) {
	res.Metric = metric
	perSize := make([][]float64, len(sizes))
	for k := 0; k < reps; k++ {
		rep := Repetition{Index: k, OK: true, Seconds: round(b.noise(0.05)*6, 2)}
		for i, sz := range sizes {
			s := one(sz)
			rep.Samples = append(rep.Samples, s)
			perSize[i] = append(perSize[i], metricOf(s, metric))
		}
		if reps > 1 {
			res.Repetitions = append(res.Repetitions, rep)
		}
		if k == 0 {
			res.Samples = rep.Samples
		}
	}
	if reps > 1 {
		res.Samples = averageSamples(res.Repetitions, metric)
		for i, sz := range sizes {
			res.Stats = append(res.Stats, statsOf(sz, metric, perSize[i]))
		}
	}
}

func metricOf(s parsers.Sample, metric parsers.Metric) float64 {
	switch metric {
	case parsers.MetricBusBW:
		return *s.BusBWBps
	case parsers.MetricLatency:
		return *s.LatAvgUS
	}
	return *s.BWAvgBps
}

// averageSamples averages the headline metric over repetitions; the other
// figures come from the first repetition.
func averageSamples(reps []Repetition, metric parsers.Metric) []parsers.Sample {
	out := append([]parsers.Sample(nil), reps[0].Samples...)
	for i := range out {
		sum := 0.0
		for _, r := range reps {
			sum += metricOf(r.Samples[i], metric)
		}
		v := round(sum/float64(len(reps)), 3)
		switch metric {
		case parsers.MetricBusBW:
			out[i].BusBWBps = &v
		case parsers.MetricLatency:
			out[i].LatAvgUS = &v
		default:
			out[i].BWAvgBps = &v
		}
	}
	return out
}

func statsOf(bytes int64, metric parsers.Metric, xs []float64) SizeStats {
	st := SizeStats{Bytes: bytes, Metric: metric, N: len(xs), Min: xs[0], Max: xs[0]}
	for _, x := range xs {
		st.Mean += x
		st.Min = math.Min(st.Min, x)
		st.Max = math.Max(st.Max, x)
	}
	st.Mean /= float64(len(xs))
	for _, x := range xs {
		st.Stddev += (x - st.Mean) * (x - st.Mean)
	}
	st.Stddev = math.Sqrt(st.Stddev / float64(len(xs)-1))
	st.Mean, st.Stddev = round(st.Mean, 3), round(st.Stddev, 3)
	return st
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// judge fills the headline figures and the verdict against 90% of line rate.
func judge(res *Result, lr *LineRate, metric parsers.Metric) {
	for _, s := range res.Samples {
		v := metricOf(s, metric)
		if v > res.BestBps {
			res.BestBps, res.BestBytes = v, s.Bytes
		}
	}
	res.LineRate = lr
	eff := round(100*res.BestBps/lr.Bps, 2)
	res.Efficiency = &eff
	res.Expectation = ">= 90% of line rate"
	if eff >= 90 {
		res.Verdict = VerdictPass
		return
	}
	res.Verdict = VerdictFail
	res.Reason = fmt.Sprintf("best %s is %.1f%% of line rate %s, expected >= 90%%",
		FormatBandwidth(res.Family, res.BestBps), eff, FormatBandwidth(res.Family, lr.Bps))
}

func (b *fixtureBuilder) newResult(test, tool, from, to string, seconds float64) Result {
	b.job++
	return Result{
		JobID: fmt.Sprintf("j%03d", b.job), Test: test, Tool: tool, Family: fixtureFamily(tool), Metric: fixtureMetric(tool), From: from, To: to,
		Started: b.next(seconds), Seconds: seconds, ToolSeconds: round(seconds*0.9, 2),
		RawOutputs: []string{
			fmt.Sprintf("raw/%s/j%03d-server.log", test, b.job),
			fmt.Sprintf("raw/%s/j%03d-client.log", test, b.job),
		},
	}
}

// fixtureFamily is what the runner's tool table says of the fixtures'
// tools (alltoall_perf: a report written when the runner named nccl-tests
// jobs by binary).
func fixtureFamily(tool string) parsers.Family {
	if tool == "alltoall_perf" {
		return parsers.FamilyNCCL
	}
	f, _ := parsers.FamilyOf(tool)
	return f
}

// fixtureMetric is the tool table's headline metric of a fixture's tool
// (repeated sets the one its figures are folded by).
func fixtureMetric(tool string) parsers.Metric {
	switch fixtureFamily(tool) {
	case parsers.FamilyRping:
		return parsers.MetricPings
	case parsers.FamilyNCCL:
		return parsers.MetricBusBW
	}
	if strings.HasSuffix(tool, "_lat") {
		return parsers.MetricLatency
	}
	return parsers.MetricBandwidth
}

func rdmaEvidence(dev string) *parsers.Transport {
	return &parsers.Transport{Kind: parsers.TransportRDMA, Source: "perftest", Detail: "RC over RoCE",
		Devices: []string{dev + ":1/RoCE"}, Evidence: []string{" Link type       : Ethernet", " Connection type : RC"}}
}

func nicLineRate() *LineRate {
	return &LineRate{Bps: ndr, Source: LineRateNIC, Detail: "mlx5_0 port 1: 400 Gb/sec (4X NDR)"}
}

func baseMeta(id string) RunMeta {
	return RunMeta{
		ID: id, Scenario: "pd-disagg", ScenarioFile: "scenarios/pd-disagg.yaml",
		ScenarioHash: "sha256:5f1c0a8e44b1d2c3e9a7b6f04d1e2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5",
		Start:        fixtureStart, Version: "v0.3.0", Backend: "kube",
		ToolVersions: map[string]string{"perftest": "6.22", "nixlbench": "0.7.1", "nccl-tests": "2.17.6", "ucx_perftest": "1.19.0"},
		Fingerprint: map[string]string{
			"nic.model": "ConnectX-7 (MT4129)", "nic.firmware": "28.43.1014", "nic.driver": "mlx5_core 24.10-1.1.4",
			"nic.mtu": "4096", "kernel": "5.14.0-503.el9.x86_64", "nccl.version": "2.27.3",
			"ucx.version": "1.19.0", "nixl.version": "0.7.1",
		},
		LineRate: nicLineRate(),
	}
}

// endpoints names n pods of a pool spread one per node.
func endpoints(pool string, n int) []EndpointInfo {
	var eps []EndpointInfo
	for i := 0; i < n; i++ {
		eps = append(eps, EndpointInfo{
			Name: fmt.Sprintf("%s-%d", pool, i), Pool: pool, Node: fmt.Sprintf("gpu-node-%02d", i),
			Device: "mlx5_0", Address: fmt.Sprintf("192.168.100.%d", 10+i),
		})
	}
	return eps
}
