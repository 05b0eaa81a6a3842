package judge

import (
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// sampleKey identifies one row across repetitions: its size and batch,
// and where a tool reports per rank and phase (the DeepEP probe) those too,
// so that ranks that moved the same bytes are not averaged into one.
type sampleKey struct {
	bytes, batch int64
	phase        string
	rank         int
}

func keyOf(s *parsers.Sample) sampleKey {
	k := sampleKey{bytes: s.Bytes, batch: s.Batch, phase: s.Phase, rank: -1}
	if s.Rank != nil {
		k.rank = *s.Rank
	}
	return k
}

// field reads and writes one optional figure of a Sample.
type field func(*parsers.Sample) **float64

var sampleFields = []field{
	func(s *parsers.Sample) **float64 { return &s.BWAvgBps },
	func(s *parsers.Sample) **float64 { return &s.BWPeakBps },
	func(s *parsers.Sample) **float64 { return &s.AggregateBps },
	func(s *parsers.Sample) **float64 { return &s.NetworkUtil },
	func(s *parsers.Sample) **float64 { return &s.MsgRatePPS },
	func(s *parsers.Sample) **float64 { return &s.LatMinUS },
	func(s *parsers.Sample) **float64 { return &s.LatAvgUS },
	func(s *parsers.Sample) **float64 { return &s.LatMaxUS },
	func(s *parsers.Sample) **float64 { return &s.LatTypicalUS },
	func(s *parsers.Sample) **float64 { return &s.LatStdevUS },
	func(s *parsers.Sample) **float64 { return &s.LatP99US },
	func(s *parsers.Sample) **float64 { return &s.LatP999US },
	func(s *parsers.Sample) **float64 { return &s.TimeUS },
	func(s *parsers.Sample) **float64 { return &s.AlgBWBps },
	func(s *parsers.Sample) **float64 { return &s.BusBWBps },
	func(s *parsers.Sample) **float64 { return &s.InplaceTimeUS },
	func(s *parsers.Sample) **float64 { return &s.InplaceAlgBWBps },
	func(s *parsers.Sample) **float64 { return &s.InplaceBusBWBps },
}

// rowsBySize groups the samples of every repetition by (size, batch), in
// the order sizes first appear.
func rowsBySize(ms []parsers.Measurement) ([]sampleKey, map[sampleKey][]parsers.Sample) {
	var keys []sampleKey
	rows := map[sampleKey][]parsers.Sample{}
	for _, m := range ms {
		for _, s := range m.Samples {
			k := keyOf(&s)
			if _, ok := rows[k]; !ok {
				keys = append(keys, k)
			}
			rows[k] = append(rows[k], s)
		}
	}
	return keys, rows
}

// averageSamples is one sample per size: each figure the mean over the
// repetitions that have it; counts (iterations, wrong) summed or maxed.
func averageSamples(ms []parsers.Measurement) []parsers.Sample {
	keys, rows := rowsBySize(ms)
	out := make([]parsers.Sample, 0, len(keys))
	for _, k := range keys {
		out = append(out, meanSample(rows[k]))
	}
	return out
}

func meanSample(rows []parsers.Sample) parsers.Sample {
	avg := parsers.Sample{Bytes: rows[0].Bytes, Batch: rows[0].Batch, Iterations: rows[0].Iterations,
		Phase: rows[0].Phase, Rank: rows[0].Rank}
	for _, f := range sampleFields {
		var vals []float64
		for i := range rows {
			if p := *f(&rows[i]); p != nil {
				vals = append(vals, *p)
			}
		}
		if len(vals) > 0 {
			*f(&avg) = parsers.F(stat.Mean(vals, nil))
		}
	}
	avg.Wrong = maxCount(rows, func(s parsers.Sample) *int64 { return s.Wrong })
	avg.InplaceWrong = maxCount(rows, func(s parsers.Sample) *int64 { return s.InplaceWrong })
	return avg
}

func maxCount(rows []parsers.Sample, get func(parsers.Sample) *int64) *int64 {
	var m *int64
	for _, r := range rows {
		if v := get(r); v != nil && (m == nil || *v > *m) {
			x := *v
			m = &x
		}
	}
	return m
}

// sizeStats summarises the result's headline metric (decided by the tool
// table, carried on the result) per size over repetitions.
func sizeStats(ms []parsers.Measurement, metric parsers.Metric) []schema.SizeStats {
	keys, rows := rowsBySize(ms)
	var out []schema.SizeStats
	for _, k := range keys {
		var vals []float64
		for i := range rows[k] {
			if v, ok := parsers.Figure(metric, &rows[k][i]); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		st := schema.SizeStats{Bytes: k.bytes, Metric: metric, N: len(vals), Mean: stat.Mean(vals, nil)}
		if len(vals) > 1 {
			st.Stddev = stat.StdDev(vals, nil)
		}
		sorted := append([]float64(nil), vals...)
		sort.Float64s(sorted)
		st.Min, st.Max = sorted[0], sorted[len(sorted)-1]
		out = append(out, st)
	}
	return out
}

// best is the size with the highest bandwidth. For nccl it is the
// out-of-place bus bandwidth, the column nccl-tests users read: the in-place
// half can be a no-op (one-rank sendrecv copies nothing: 4 µs for 4 GiB,
// "1e+06" GB/s) and never makes the headline. Where every bus bandwidth is
// 0 (one rank of a collective, by nccl-tests' definition) the out-of-place
// algorithm bandwidth stands in.
func best(samples []parsers.Sample) (bps float64, bytes int64) {
	for _, s := range samples {
		v := s.BWAvgBps
		if s.BusBWBps != nil {
			v = s.BusBWBps
		}
		if v != nil && *v > bps {
			bps, bytes = *v, s.Bytes
		}
	}
	if bps > 0 {
		return bps, bytes
	}
	for _, s := range samples {
		if v := s.AlgBWBps; s.BusBWBps != nil && v != nil && *v > bps {
			bps, bytes = *v, s.Bytes
		}
	}
	return bps, bytes
}
