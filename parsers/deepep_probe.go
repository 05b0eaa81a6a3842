package parsers

import (
	"regexp"
	"strconv"
	"strings"
)

// deepEPProbe is rdmabench's DeepEP probe (cmd/rdmabench-deepep). Rank 0
// prints a banner, then one line per rank and kernel phase:
//
//	# rdmabench-deepep version 1 deep_ep=1.2.1+567632d deep_ep-api=V1 torch=2.11.0+cu130 nccl-version=2.28.9 nvshmem=3.4.5 …
//	[rank 0] rdmabench-deepep normal dispatch (FP8): 0.00 GB/s (RDMA), 152.31 GB/s (NVL), 0 bytes (RDMA), 45678 bytes (NVL), avg_t=…
//	[rank 0] rdmabench-deepep low_latency combine (BF16): 61.20 GB/s, 14680064 bytes, avg_t=… us, min_t=… us, max_t=… us, path=nvshmem, …
//	[rank 0] rdmabench-deepep low_latency dispatch+combine (FP8): 148.90 GB/s, 22134784 bytes, avg_t=… us, …
//
// (the low-latency pair timed back to back, as DeepEP's "Dispatch + combine")
// and its failures as "rdmabench-deepep: …" lines.
const deepEPProbe = "rdmabench-deepep"

var (
	reProbeLine  = regexp.MustCompile(`^\[rank (\d+)\] rdmabench-deepep (normal|low_latency) (dispatch|combine|dispatch\+combine) \((FP8|BF16)\): (.*)$`)
	reProbeTotal = regexp.MustCompile(`^([\d.]+) GB/s, (\d+) bytes,`)
	reProbeBytes = regexp.MustCompile(`(\d+) bytes \((RDMA|NVL)\)`)
	reProbeTimes = regexp.MustCompile(`avg_t=([\d.]+) us, min_t=([\d.]+) us, max_t=([\d.]+) us`)
	reProbeKV    = regexp.MustCompile(`\b(path|tokens|recv_tokens|check)=(\S+?)(?:,|$)`)
)

// deepEPProbeLine reads one of the probe's result lines: Test "normal
// dispatch (FP8)", Side "rank N", the sample's bandwidth the RDMA part
// where it is not zero (internode), else the NVLink part (normal) or the
// total (low latency), its bytes the same part's, its latencies the timed
// calls'; the sample names its phase and rank, and its Batch is the
// kernel's tokens per rank, so that the runner keeps one row per rank and
// phase (ranks of the low-latency kernels move the same bytes).
func deepEPProbeLine(t string) (Measurement, bool) {
	g := reProbeLine.FindStringSubmatch(t)
	if g == nil {
		return Measurement{}, false
	}
	rest := g[5]
	info := map[string]string{"version": "V1", "kernels": g[2], "dtype": g[4]}
	for _, kv := range reProbeKV.FindAllStringSubmatch(rest, -1) {
		info[kv[1]] = kv[2]
	}
	parts, bytes := map[string]float64{}, map[string]int64{}
	for _, p := range reGBps.FindAllStringSubmatch(rest, -1) {
		if v, ok := finiteFloat(p[1]); ok {
			parts[p[2]] = v
			info[strings.ToLower(p[2])+"_GB/s"] = p[1]
		}
	}
	for _, b := range reProbeBytes.FindAllStringSubmatch(rest, -1) {
		if n, err := strconv.ParseInt(b[1], 10, 64); err == nil {
			bytes[b[2]] = n
			info[strings.ToLower(b[2])+"_bytes"] = b[1]
		}
	}
	if tot := reProbeTotal.FindStringSubmatch(rest); tot != nil {
		if v, ok := finiteFloat(tot[1]); ok {
			parts["total"] = v
			bytes["total"], _ = strconv.ParseInt(tot[2], 10, 64)
		}
	}
	part := "total"
	if _, ok := parts[part]; !ok {
		part = "NVL"
		if parts["RDMA"] > 0 {
			part = "RDMA"
		}
	}
	bw, ok := parts[part]
	tm := reProbeTimes.FindStringSubmatch(rest)
	if !ok || tm == nil {
		return Measurement{}, false
	}
	// bytes / avg_t where both are there: the printed GB/s has two decimals.
	if avg, ok := finiteFloat(tm[1]); ok && avg > 0 && bytes[part] > 0 {
		bw = float64(bytes[part]) / avg / 1e3
	}
	phase := g[2] + " " + g[3] + " (" + g[4] + ")"
	rank, _ := strconv.Atoi(g[1])
	tokens, _ := strconv.ParseInt(info["tokens"], 10, 64)
	s := Sample{Bytes: bytes[part], Batch: tokens, BWAvgBps: F(bw * gbpsToBps), TimeUS: optFloat(tm[1], 1),
		LatAvgUS: optFloat(tm[1], 1), LatMinUS: optFloat(tm[2], 1), LatMaxUS: optFloat(tm[3], 1), Phase: phase, Rank: &rank}
	return Measurement{Tool: deepEPProbe, OK: true, Test: phase, Side: "rank " + g[1],
		Info: info, Samples: []Sample{s}}, true
}

// deepEPProbeBanner reads "# rdmabench-deepep version 1 k=v …" into the
// facts every measurement of the run carries (keys with _ for -).
func deepEPProbeBanner(t string, facts map[string]string) bool {
	body, ok := strings.CutPrefix(t, "# "+deepEPProbe+" version ")
	if !ok {
		return false
	}
	f := strings.Fields(body)
	if len(f) > 0 {
		facts["probe_version"] = f[0]
	}
	for _, kv := range f[min(1, len(f)):] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			facts[strings.ReplaceAll(k, "-", "_")] = v
		}
	}
	return true
}
