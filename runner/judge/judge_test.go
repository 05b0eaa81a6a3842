package judge

import (
	"math"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
)

func bw(bytes int64, bps float64) parsers.Sample {
	return parsers.Sample{Bytes: bytes, BWAvgBps: parsers.F(bps)}
}

func meas(samples ...parsers.Sample) parsers.Measurement {
	return parsers.Measurement{OK: true, Samples: samples}
}

func TestFillResultStatsAndBest(t *testing.T) {
	outs := []Outcome{
		{OK: true, M: meas(bw(4096, 10e9), bw(65536, 90e9))},
		{OK: true, M: meas(bw(4096, 20e9), bw(65536, 100e9))},
		{OK: true, M: meas(bw(4096, 30e9), bw(65536, 110e9))},
	}
	lr := &schema.LineRate{Bps: 200e9, Source: schema.LineRateDeclared}
	res := schema.Result{Metric: parsers.MetricBandwidth} // the runner sets it from the tool table
	test := &scenarios.Test{Expect: scenarios.Expect{MinLineRate: scenarios.Percent{Raw: "60%"}}}
	Fill(&res, test, lr, outs)
	if res.BestBytes != 65536 || res.BestBps != 100e9 || *res.Efficiency != 50 {
		t.Fatalf("best %v @ %d, eff %v", res.BestBps, res.BestBytes, *res.Efficiency)
	}
	st := res.Stats[1]
	if st.N != 3 || st.Mean != 100e9 || st.Min != 90e9 || st.Max != 110e9 || math.Abs(st.Stddev-10e9) > 1 {
		t.Fatalf("stats %+v", st)
	}
	if res.Verdict != schema.VerdictFail || !strings.Contains(res.Reason, "50.0% of line rate") {
		t.Fatalf("verdict %s reason %q", res.Verdict, res.Reason)
	}
}

func TestJudgeTable(t *testing.T) {
	lat := func(us float64) parsers.Sample {
		return parsers.Sample{Bytes: 64, LatAvgUS: parsers.F(us), LatP99US: parsers.F(us * 2)}
	}
	pings := 3
	cases := []struct {
		name    string
		expect  scenarios.Expect
		lr      *schema.LineRate
		m       parsers.Measurement
		verdict string
		reason  string
	}{
		{"no expectation", scenarios.Expect{}, nil, meas(bw(1, 1e9)), schema.VerdictPass, "no expectation"},
		{"min bandwidth met", scenarios.Expect{MinBandwidth: scenarios.Rate{Raw: "1Gb/s"}}, nil, meas(bw(1, 2e9)), schema.VerdictPass, ""},
		{"min bandwidth short", scenarios.Expect{MinBandwidth: scenarios.Rate{Raw: "10Gb/s"}}, nil, meas(bw(1, 2e9)), schema.VerdictFail, "below 10.00 Gb/s"},
		{"line rate unknown", scenarios.Expect{MinLineRate: scenarios.Percent{Raw: "90%"}}, nil, meas(bw(1, 2e9)), schema.VerdictPass, "not judged"},
		{"latency met", scenarios.Expect{MaxLatency: scenarios.Duration{Raw: "5us"}}, nil, meas(lat(3)), schema.VerdictPass, ""},
		{"p99 short", scenarios.Expect{MaxP99Latency: scenarios.Duration{Raw: "5us"}}, nil, meas(lat(3)), schema.VerdictFail, "p99 latency 6.00us"},
		{"pings short", scenarios.Expect{MinPings: 5}, nil, parsers.Measurement{OK: true, Pings: &pings}, schema.VerdictFail, "3 pings completed, want 5"},
		{"tcp fallback", scenarios.Expect{Transport: "rdma"}, nil,
			parsers.Measurement{OK: true, Samples: []parsers.Sample{bw(1, 1e9)}, Transport: &parsers.Transport{Kind: "tcp", Detail: "NET/Socket"}},
			schema.VerdictFail, "ran over tcp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var res schema.Result
			Fill(&res, &scenarios.Test{Expect: c.expect}, c.lr, []Outcome{{OK: true, M: c.m}})
			if res.Verdict != c.verdict || !strings.Contains(res.Reason, c.reason) {
				t.Fatalf("verdict %s reason %q; want %s with %q", res.Verdict, res.Reason, c.verdict, c.reason)
			}
		})
	}
}

func TestFailedRepetitionIsError(t *testing.T) {
	var res schema.Result
	Fill(&res, nil, nil, []Outcome{
		{OK: true, M: meas(bw(1, 1e9))},
		{Class: parsers.ClassTimeout, Err: "timed out after 10s"},
	})
	if res.Verdict != schema.VerdictError || res.ErrorClass != parsers.ClassTimeout || !strings.Contains(res.Reason, "repetition 2/2: timed out") {
		t.Fatalf("%s %s %q", res.Verdict, res.ErrorClass, res.Reason)
	}
	if len(res.Samples) != 1 || len(res.Repetitions) != 2 || res.Repetitions[1].OK {
		t.Fatalf("the good repetition's samples must be kept: %+v", res)
	}
}

func TestResolveLineRate(t *testing.T) {
	sc := &scenarios.Scenario{LineRate: scenarios.Rate{Raw: "400Gb/s"}}
	if lr := ResolveLineRate(sc, nil); lr.Source != schema.LineRateDeclared || lr.Bps != 400e9 {
		t.Errorf("declared: %+v", lr)
	}
	sc.LineRate = scenarios.Rate{Raw: "auto"}
	if lr := ResolveLineRate(sc, nil); lr.Source != schema.LineRateNone {
		t.Errorf("auto without NIC: %+v", lr)
	}
	nic := func() (float64, string, bool) { return 200e9, "mlx5_0 port 1: 200 Gb/sec (4X HDR)", true }
	if lr := ResolveLineRate(sc, nic); lr.Source != schema.LineRateNIC || lr.Bps != 200e9 {
		t.Errorf("auto with NIC: %+v", lr)
	}
	if lr := ResolveLineRate(&scenarios.Scenario{}, nic); lr.Source != schema.LineRateNone {
		t.Errorf("unset: %+v", lr)
	}
}

// TestOneRankCollectiveIsInvalid: a collective of one rank printed a
// figure but moved nothing between GPUs: invalid, with the fix; two ranks
// pass as before.
func TestOneRankCollectiveIsInvalid(t *testing.T) {
	for _, c := range []struct {
		ranks   int
		verdict string
	}{{1, schema.VerdictInvalid}, {2, schema.VerdictPass}} {
		res := schema.Result{Family: parsers.FamilyNCCL, NRanks: c.ranks}
		Fill(&res, &scenarios.Test{}, nil, []Outcome{{OK: true, M: meas(bw(1<<20, 1e12))}})
		if res.Verdict != c.verdict || (c.ranks == 1 && !strings.Contains(res.Reason, "gpus: all")) {
			t.Errorf("%d rank(s): %s %q", c.ranks, res.Verdict, res.Reason)
		}
	}
}

// TestFillKeepsRanksApart: the DeepEP probe's ranks move the same bytes in
// the low-latency kernels; each rank and phase stays its own row (averaged
// over repetitions only), so that the slowest rank is still there for the
// EP budget.
func TestFillKeepsRanksApart(t *testing.T) {
	rank := func(r int, phase string, us float64) parsers.Sample {
		return parsers.Sample{Bytes: 7511712, Batch: 128, Phase: phase, Rank: &r, LatAvgUS: parsers.F(us), BWAvgBps: parsers.F(7511712 * 8 / us * 1e6)}
	}
	const d = "low_latency dispatch (FP8)"
	outs := []Outcome{
		{OK: true, M: meas(rank(0, d, 37), rank(1, d, 39))},
		{OK: true, M: meas(rank(0, d, 39), rank(1, d, 41))},
	}
	var res schema.Result
	Fill(&res, &scenarios.Test{}, nil, outs)
	if len(res.Samples) != 2 {
		t.Fatalf("%d samples, want one per rank: %+v", len(res.Samples), res.Samples)
	}
	for i, want := range []float64{38, 40} {
		s := res.Samples[i]
		if *s.Rank != i || s.Phase != d || s.Batch != 128 || *s.LatAvgUS != want {
			t.Errorf("sample %d: rank %v phase %q batch %d avg %v, want rank %d %v µs", i, *s.Rank, s.Phase, s.Batch, *s.LatAvgUS, i, want)
		}
	}
}
