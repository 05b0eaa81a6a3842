package parsers

import (
	"io"
	"regexp"
	"strconv"
	"strings"
)

// NCCL EP's ep_bench (NVIDIA/nccl-extensions nccl_ep/ep_bench.cu) prints,
// on rank 0, a summary per algorithm:
//
//	=== Summary (Low Latency, across 8 ranks) ===
//	--- Host-observed performance ---
//	Dispatch:  avg=… us, min=… us, max=… us
//	          bus bandwidth (excl. protocol headers): avg=… GB/s, min=… GB/s (rank r), max=… GB/s (rank r)
//	          algorithm bandwidth: avg=… GB/s, min=… GB/s, max=… GB/s
//
// and for high throughput "Dispatch:    total=… us (min=…, max=…)" with
// "recv: total_bw=…  nvl_bw=…  rdma_bw=… GB/s" lines. One Measurement per
// phase and timing (host-observed, kernel-only, total time), its one
// Sample holding the times and bandwidths.
var (
	reEPSummary = regexp.MustCompile(`^=== Summary \((Low Latency|High Throughput)(?: recipe)?\s*([^,]*), across (\d+) ranks\) ===`)
	reEPSection = regexp.MustCompile(`^--- (.+?) ---$`)
	reEPPhase   = regexp.MustCompile(`^(Dispatch|Combine|Total \(D\+C\)|DispatchEpilogue|CombinePrologue):\s+(?:avg|total|kernel)=([\d.]+) us(?:, min=([\d.]+) us, max=([\d.]+) us| \(min=([\d.]+), max=([\d.]+)\))?`)
	reEPBusBW   = regexp.MustCompile(`^bus bandwidth \(excl\. protocol headers\): avg=([\d.]+) GB/s, min=([\d.]+) GB/s(?: \(rank (\d+)\))?, max=([\d.]+) GB/s(?: \(rank (\d+)\))?`)
	reEPAlgBW   = regexp.MustCompile(`^algorithm bandwidth: avg=([\d.]+) GB/s`)
	reEPDirBW   = regexp.MustCompile(`^(recv|send): total_bw=([\d.]+)\s+nvl_bw=([\d.]+)\s+rdma_bw=([\d.]+) GB/s`)
)

// ParseEPBench reads ep_bench's output. Without a summary it is one failed
// Measurement: a "Failed: … error" line is the tool's error.
func ParseEPBench(r io.Reader) ([]Measurement, error) {
	var ms []Measurement
	var algo, recipe, section, lastErr string
	ranks := 0
	cur := -1
	sc := newLineScanner(r)
	for sc.Scan() {
		t := strings.TrimSpace(stripLogPrefix(CleanLine(sc.Text())))
		if g := reEPSummary.FindStringSubmatch(t); g != nil {
			algo = strings.ToLower(strings.ReplaceAll(g[1], " ", "_"))
			recipe, section, cur = strings.TrimSpace(g[2]), "", -1
			ranks, _ = strconv.Atoi(g[3])
			continue
		}
		if strings.HasPrefix(t, "Failed: ") {
			lastErr = t
		}
		if algo == "" {
			continue
		}
		if g := reEPSection.FindStringSubmatch(t); g != nil {
			section, cur = strings.ToLower(g[1]), -1
			continue
		}
		if g := reEPPhase.FindStringSubmatch(t); g != nil {
			ms = append(ms, epBenchPhase(g, algo, recipe, section, ranks))
			cur = len(ms) - 1
			continue
		}
		if cur >= 0 {
			epBenchBandwidth(&ms[cur], t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		if lastErr != "" {
			return []Measurement{failed("ep_bench", ClassToolError, lastErr)}, nil
		}
		return []Measurement{failed("ep_bench", ClassNoResults, "no ep_bench summary (=== Summary (…, across N ranks) ===)")}, nil
	}
	return ms, nil
}

func epBenchPhase(g []string, algo, recipe, section string, ranks int) Measurement {
	s := Sample{LatAvgUS: optFloat(g[2], 1), LatMinUS: optFloat(orString(g[3], g[5]), 1), LatMaxUS: optFloat(orString(g[4], g[6]), 1)}
	info := map[string]string{"algorithm": algo}
	if recipe != "" {
		info["recipe"] = recipe
	}
	if section != "" {
		info["timing"] = section
	}
	phase := strings.ToLower(strings.ReplaceAll(g[1], " (D+C)", "+"))
	if phase == "total+" {
		phase = "dispatch+combine"
	}
	return Measurement{Tool: "ep_bench", OK: true, Test: algo + " " + phase, Ranks: ranks, Info: info, Samples: []Sample{s}}
}

// epBenchBandwidth reads a bandwidth line under a phase line.
func epBenchBandwidth(m *Measurement, t string) {
	s := &m.Samples[0]
	if g := reEPBusBW.FindStringSubmatch(t); g != nil {
		s.BusBWBps = optFloat(g[1], gbpsToBps)
		m.Info["busbw_min_GB/s"], m.Info["busbw_max_GB/s"] = g[2], g[4]
		if g[3] != "" {
			m.Info["busbw_min_rank"], m.Info["busbw_max_rank"] = g[3], g[5]
		}
		return
	}
	if g := reEPAlgBW.FindStringSubmatch(t); g != nil {
		s.AlgBWBps = optFloat(g[1], gbpsToBps)
		return
	}
	if g := reEPDirBW.FindStringSubmatch(t); g != nil {
		m.Info[g[1]+"_total_GB/s"], m.Info[g[1]+"_nvl_GB/s"], m.Info[g[1]+"_rdma_GB/s"] = g[2], g[3], g[4]
		if g[1] == "recv" { // the receive side: when the expert GEMM can start
			s.BWAvgBps = optFloat(g[2], gbpsToBps)
		}
	}
}
