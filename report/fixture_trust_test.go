package report

import (
	"fmt"

	"github.com/rdmabench/rdmabench/parsers"
)

func bwSamples(bytesBps map[int64]float64) []parsers.Sample {
	var out []parsers.Sample
	for _, b := range []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20} {
		if v, ok := bytesBps[b]; ok {
			v := v
			out = append(out, parsers.Sample{Bytes: b, BWAvgBps: &v})
		}
	}
	return out
}

func planted(test, tool, from, to string, bps float64, mod func(*Result)) Result {
	r := Result{Test: test, Tool: tool, From: from, To: to, Verdict: VerdictPass, BestBps: bps, BestBytes: 1 << 20,
		Samples: bwSamples(map[int64]float64{1 << 20: bps})}
	upgradeResult(&r) // the family and metric the runner would have set
	if mod != nil {
		mod(&r)
	}
	return r
}

// trustReport is planted data for the three views: one pair (a, b)
// measured at every layer, a 4-endpoint all-to-all matrix in which every
// pair of ep-3 is slow and ep-0 → ep-1 was slow once, and a serving setup.
func trustReport() *Report {
	lr := &LineRate{Bps: 400e9, Source: LineRateDeclared, Detail: "scenario"}
	rs := []Result{
		planted("host", "ib_write_bw", "a", "b", 390e9, func(r *Result) { r.Commands = []string{"ib_write_bw -d mlx5_0 -F --report_gbits"} }),
		planted("host", "ib_write_bw", "b", "a", 388e9, nil),
		planted("gpu", "ib_write_bw", "a", "b", 360e9, func(r *Result) { r.Commands = []string{"ib_write_bw -d mlx5_0 --use_cuda=0"} }),
		planted("ucx", "ucx_perftest", "a", "b", 342e9, nil),
		planted("kv", "nixlbench", "b", "a", 330e9, func(r *Result) {
			r.Backend, r.Op = "UCX", "READ"
			r.Samples = bwSamples(map[int64]float64{4 << 10: 40e9, 64 << 10: 200e9, 1 << 20: 330e9})
		}),
		planted("kv", "nixlbench", "b", "a", 300e9, func(r *Result) {
			r.Backend, r.Op = "LIBFABRIC", "READ"
			r.Samples = bwSamples(map[int64]float64{4 << 10: 20e9, 64 << 10: 150e9, 1 << 20: 300e9})
		}),
		planted("p2p", "sendrecv_perf", "", "", 297e9, func(r *Result) { r.Ranks = []string{"a/gpu0", "b/gpu0"} }),
		planted("lat", "ib_write_lat", "a", "b", 0, nil), // no layer
	}
	eps := []EndpointInfo{{Name: "a", Node: "n1"}, {Name: "b", Node: "n2"}}
	for i := 0; i < 4; i++ {
		eps = append(eps, EndpointInfo{Name: fmt.Sprintf("ep-%d", i), Node: fmt.Sprintf("gpu-node-%02d", i), Device: fmt.Sprintf("mlx5_%d", i)})
	}
	rule := LowPairRule{BelowPct: 80, Of: "best", Retests: 2}
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			if i == j {
				continue
			}
			from, to := fmt.Sprintf("ep-%d", i), fmt.Sprintf("ep-%d", j)
			bps := 380e9 - float64(i+j)*1e9
			switch {
			case i == 3 || j == 3:
				bps = 150e9
			case i == 0 && j == 1:
				bps = 200e9 // noise: recovers on retest
			}
			rs = append(rs, planted("a2a", "ib_write_bw", from, to, bps, func(r *Result) {
				r.Pattern = "all-to-all"
				if bps < 300e9 {
					r.Verdict = VerdictFail
				}
			}))
			if bps < 300e9 {
				for n := 1; n <= 2; n++ {
					again := bps
					if i == 0 && j == 1 {
						again = 379e9
					}
					rs = append(rs, planted("a2a", "ib_write_bw", from, to, again, func(r *Result) { r.Retest, r.Pattern = n, "all-to-all" }))
				}
			}
		}
	}
	r := &Report{SchemaVersion: SchemaVersion, Run: RunMeta{ID: "trust", Scenario: "trust", Start: fixtureStart, LineRate: lr, Backend: "local"},
		Endpoints: eps, Results: rs,
		Serving: &ServingSetup{Model: "llama-3.1-70b", Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16", DtypeBytes: 2,
			ContextLengths: []int{4096, 32768}, PrefillTP: 8, DecodeTP: 8, BlockTokens: 16}}
	r.LowPairs = []LowPairAnalysis{AnalyzeLowPairs(rs, eps, "a2a", rule)}
	r.Summary = CountVerdicts(rs)
	Derive(r)
	return r
}
