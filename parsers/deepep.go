package parsers

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// DeepEP's tests print one result per line, in three layouts (the formats
// are those of DeepEP's tests/test_intranode.py, test_internode.py and
// test_low_latency.py for V1, tests/elastic/test_ep.py for V2):
//
//	[tuning] Best dispatch (BF16): SMs 24, NVL chunk 4, RDMA chunk 20: 24.64 GB/s (RDMA), 81.30 GB/s (NVL)
//	[rank 1] Dispatch + combine bandwidth: 42.24 GB/s, avg_t=521.97 us, min_t=517.44 us, max_t=527.33 us
//	   - EP:   4/16 | expanded dispatch: 115 GB/s (SO), 376 GB/s (SU), 1064.000 us, 400593024 bytes | copy: 4791 GB/s, 187.879 us
//
// Each becomes one Measurement: Test names the kernel and phase
// ("normal dispatch (BF16)", "low_latency dispatch+combine", "v2 expanded
// dispatch"), Side the rank where the line has one, and the one Sample
// carries the bandwidth (RDMA's, or scale-out's, where the line has it and
// it is not zero; else NVLink's) and the time; Info keeps both parts.
var (
	reTuningBest = regexp.MustCompile(`^\[tuning\] Best (dispatch(?: \((?:BF16|FP8)\))?|combine)\s*:\s*SMs (\d+), NVL chunk (\w+)(?:, RDMA chunk (\d+))?[:,]\s*(.*)$`)
	reNotifyT    = regexp.MustCompile(`([\d.]+) \+ ([\d.]+) us`)
	reGBps       = regexp.MustCompile(`([\d.]+) GB/s \((RDMA|NVL|SO|SU)\)`)
	reTOnly      = regexp.MustCompile(`t: ([\d.]+) us`)
	reLLBoth     = regexp.MustCompile(`^\[rank (\d+)\] Dispatch \+ combine bandwidth: ([\d.]+) GB/s, avg_t=([\d.]+) us, min_t=([\d.]+) us, max_t=([\d.]+) us`)
	reLLSplit    = regexp.MustCompile(`^\[rank (\d+)\] Dispatch bandwidth: ([\d.]+) GB/s, avg_t=([\d.]+) us \| Combine bandwidth: ([\d.]+) GB/s, avg_t=([\d.]+) us`)
	reLLSendRecv = regexp.MustCompile(`^\[rank (\d+)\] Dispatch send/recv time: ([\d.]+) \+ ([\d.]+) us \| Combine send/recv time: ([\d.]+) \+ ([\d.]+) us`)
	reV2         = regexp.MustCompile(`^\s*[*\-#@+] EP:\s*(\d+)/(\d+) \| ([a-z ]+): ([\d.]+) GB/s \(SO\), ([\d.]+) GB/s \(SU\), ([\d.]+) us, (\d+) bytes \| (copy|reduce): ([\d.]+) GB/s, ([\d.]+) us`)
)

// gbpsToBps turns GB/s (10⁹ bytes) into bits per second.
const gbpsToBps = 8e9

// ParseDeepEP reads the output of DeepEP's own tests (V1 intranode,
// internode and low-latency; V2's test_ep.py) and of rdmabench's DeepEP
// probe (deepep_probe.go). A run with no result line is one failed
// Measurement: a traceback or DeepEP's timeout is a tool error or timeout,
// a tuning sweep without its Best line a truncated run; each failure the
// probe names is a failed Measurement beside the results it did get.
func ParseDeepEP(r io.Reader) ([]Measurement, error) {
	var d deepEPRun
	d.facts = map[string]string{}
	sc := newLineScanner(r)
	for sc.Scan() {
		for _, part := range splitRankRecords(stripLogPrefix(CleanLine(sc.Text()))) {
			d.line(part)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return d.measurements(), nil
}

// deepEPRun is what ParseDeepEP gathered from one output.
type deepEPRun struct {
	ms            []Measurement
	defaultCfg    *Measurement // the sweep's "NVL chunk default" row, named by the Best line after it
	warns         []string
	lastErr       string
	probeFailures []string
	sweep         bool
	traceback     bool              // a Python traceback: the program died there
	probeMode     string            // the probe's "# config: mode=…"
	facts         map[string]string // the probe's banner and notes
}

func (d *deepEPRun) line(line string) {
	t := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(t, "[tuning] Best "):
		if m, ok := deepEPTuning(t); ok {
			if d.defaultCfg != nil {
				// The default configuration (what vLLM and the probe run
				// untuned) of the kernel this Best line names.
				def := *d.defaultCfg
				def.Test = m.Test + " (default config)"
				d.ms = append(d.ms, def)
				d.defaultCfg = nil
			}
			d.ms = append(d.ms, m)
		}
	case strings.HasPrefix(t, "[tuning] "):
		d.sweep = true
		if m, ok := deepEPDefaultConfig(t); ok {
			d.defaultCfg = &m
		}
	case strings.HasPrefix(t, "[rank "):
		if m, ok := deepEPProbeLine(t); ok {
			d.ms = append(d.ms, m)
		} else {
			d.ms = append(d.ms, deepEPLowLatency(t)...)
		}
	case deepEPProbeBanner(t, d.facts):
	case strings.HasPrefix(t, "# config: mode="):
		d.probeMode, _, _ = strings.Cut(strings.TrimPrefix(t, "# config: mode="), " ")
	case strings.HasPrefix(t, "# nvshmem: loaded "):
		d.facts["nvshmem_loaded"] = strings.TrimPrefix(t, "# nvshmem: loaded ")
	case strings.HasPrefix(t, deepEPProbe+": "):
		if !strings.HasSuffix(t, "(the lines above name it)") { // the summary of failures said already
			d.probeFailures = append(d.probeFailures, t)
		}
	case strings.Contains(t, " EP:"):
		if m, ok := deepEPV2(line); ok {
			d.ms = append(d.ms, m)
		}
	case strings.Contains(t, "init failed for transport"):
		d.warns = append(d.warns, t)
	case deepEPErrorLine(t):
		d.traceback = d.traceback || strings.HasPrefix(t, "Traceback")
		d.lastErr = t
	}
}

func (d *deepEPRun) measurements() []Measurement {
	ms := d.ms
	for _, f := range d.probeFailures {
		m := failed(deepEPProbe, deepEPProbeClass(f), f)
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return []Measurement{deepEPFailure(d.lastErr, d.sweep, d.warns)}
	}
	if m, ok := d.cutShort(ms); ok {
		ms = append(ms, m)
	} else if d.traceback && len(d.probeFailures) == 0 {
		// Results, then a traceback (a peer died and a collective raised;
		// a test script's rank failed): the run did not finish.
		m := deepEPFailure(d.lastErr, false, nil)
		if ms[0].Tool == deepEPProbe {
			m.Tool = deepEPProbe
		}
		ms = append(ms, m)
	}
	for i := range ms {
		ms[i].Warnings = d.warns
		if ms[i].Tool != deepEPProbe {
			continue
		}
		if ms[i].Info == nil {
			ms[i].Info = map[string]string{}
		}
		for k, v := range d.facts {
			ms[i].Info[k] = v
		}
		ms[i].Version = d.facts["probe_version"]
		ms[i].Ranks, _ = strconv.Atoi(d.facts["ranks"])
		if ms[i].OK {
			ms[i].Transport = deepEPTransport(ms[i].Info, d.facts, d.warns)
		}
	}
	return ms
}

// cutShort is a failure for a probe run that printed fewer result lines
// than its configuration and ranks promise (ranks × kernel sets × dispatch
// and combine), said nothing of why and raised nothing: rank 0 was killed.
func (d *deepEPRun) cutShort(ms []Measurement) (Measurement, bool) {
	ranks, err := strconv.Atoi(d.facts["ranks"])
	sets := map[string]int{"both": 2, "normal": 1, "low_latency": 1}[d.probeMode]
	if err != nil || ranks <= 0 || sets == 0 || len(d.probeFailures) > 0 || d.traceback {
		return Measurement{}, false
	}
	got := 0
	for i := range ms {
		if ms[i].OK && ms[i].Tool == deepEPProbe {
			got++
		}
	}
	if want := ranks * sets * 2; got < want {
		return failed(deepEPProbe, ClassTruncated, fmt.Sprintf("the probe's output ends after %d of %d result lines (%d rank(s), mode %s), "+
			"without a failure of its own: it was killed (out of memory, a lost pod?)", got, want, ranks, d.probeMode)), true
	}
	return Measurement{}, false
}

// deepEPTransport is what carried a probe result, from the probe's own
// words: the intranode kernels and NVSHMEM on one host move data over
// NVLink (GPU peer-to-peer); the internode kernels put their RDMA part on
// the NICs; one rank moves nothing between GPUs. NVSHMEM's "init failed
// for transport: IBGDA" is kept as evidence (no GPU-initiated RDMA here).
func deepEPTransport(info, facts map[string]string, warns []string) *Transport {
	path := info["path"]
	t := &Transport{Source: "deepep", Evidence: append([]string{"path=" + path + " hosts=" + facts["hosts"]}, warns...)}
	switch {
	case facts["ranks"] == "1":
		t.Kind, t.Detail = TransportNone, "single rank: no inter-GPU transport"
	case path == "internode":
		t.Kind, t.Detail = TransportRDMA, "internode kernels: NVLink within a host, RDMA between hosts"
	case path == "intranode" || facts["hosts"] == "1":
		t.Kind, t.Detail = TransportP2P, path+" kernels over NVLink (one host)"
	default:
		t.Kind, t.Detail = TransportUnknown, path
	}
	if len(t.Evidence) > maxEvidence {
		t.Evidence = t.Evidence[:maxEvidence]
	}
	return t
}

// deepEPProbeClass is the class of one of the probe's failure lines: a
// rendezvous or watchdog that ran out is a timeout, a check that did not
// hold wrong data, the rest the tool's own error.
func deepEPProbeClass(line string) ErrorClass {
	switch {
	case strings.Contains(line, "did not finish within") || strings.Contains(line, "rendezvous") || strings.Contains(line, "timed out"):
		return ClassTimeout
	case strings.Contains(line, "check failed: "):
		return ClassDataError
	case strings.Contains(line, "not set:") || strings.Contains(line, "must be"):
		return ClassUsageError
	}
	return ClassToolError
}

func deepEPErrorLine(t string) bool {
	return strings.HasPrefix(t, "Traceback") || strings.Contains(t, "Error:") || strings.Contains(t, "error:") ||
		strings.HasPrefix(t, "RuntimeError") || strings.Contains(t, "CUDA error")
}

func deepEPFailure(lastErr string, sweep bool, warns []string) Measurement {
	var m Measurement
	switch {
	case lastErr != "" && (strings.Contains(strings.ToLower(lastErr), "timeout") || strings.Contains(lastErr, "timed out")):
		m = failed("deepep", ClassTimeout, lastErr)
	case lastErr != "":
		m = failed("deepep", ClassToolError, lastErr)
	case sweep:
		m = failed("deepep", ClassTruncated, "the tuning sweep printed no [tuning] Best line: the run ended early")
	default:
		m = failed("deepep", ClassNoResults, "no DeepEP result line ([tuning] Best, [rank N] … bandwidth, EP: r/n | …)")
	}
	m.Warnings = warns
	return m
}

var (
	reTuningDefault = regexp.MustCompile(`^\[tuning\] SMs (\d+), NVL chunk default(?:, RDMA chunk default)?:\s*(.*)$`)
	reTrailingUS    = regexp.MustCompile(`([\d.]+) us\s*$`)
)

// deepEPDefaultConfig reads a sweep's row for the default chunk sizes:
// "[tuning] SMs 24, NVL chunk default: 254.59 GB/s (NVL), 429.20 us".
func deepEPDefaultConfig(t string) (Measurement, bool) {
	g := reTuningDefault.FindStringSubmatch(t)
	if g == nil {
		return Measurement{}, false
	}
	info := map[string]string{"version": "V1", "kernels": "normal", "sms": g[1], "nvl_chunk": "default"}
	parts := map[string]float64{}
	for _, p := range reGBps.FindAllStringSubmatch(g[2], -1) {
		if v, ok := finiteFloat(p[1]); ok {
			parts[p[2]] = v
			info[strings.ToLower(p[2])+"_GB/s"] = p[1]
		}
	}
	bw, ok := headline(parts, "RDMA", "NVL")
	if !ok {
		return Measurement{}, false
	}
	s := Sample{BWAvgBps: F(bw * gbpsToBps)}
	if n := reTrailingUS.FindStringSubmatch(g[2]); n != nil {
		s.TimeUS = optFloat(n[1], 1)
	}
	return Measurement{Tool: "deepep", OK: true, Info: info, Samples: []Sample{s}}, true
}

// splitRankRecords splits a line that holds several "[rank N] …" records:
// DeepEP's low-latency test prints "Dispatch + combine bandwidth" without a
// newline from every rank at once, so on 4×H100 the four ranks' records
// ran together on one line.
func splitRankRecords(line string) []string {
	first := strings.Index(line, "[rank ")
	if first < 0 || !strings.Contains(line[first+1:], "[rank ") {
		return []string{line}
	}
	var parts []string
	rest := line
	for {
		i := strings.Index(rest[1:], "[rank ")
		if i < 0 {
			break
		}
		parts = append(parts, rest[:i+1])
		rest = rest[i+1:]
	}
	return append(parts, rest)
}

// deepEPTuning reads a normal (high-throughput) kernel's Best line.
func deepEPTuning(t string) (Measurement, bool) {
	g := reTuningBest.FindStringSubmatch(t)
	if g == nil {
		return Measurement{}, false
	}
	info := map[string]string{"version": "V1", "kernels": "normal", "sms": g[2], "nvl_chunk": g[3]}
	if g[4] != "" {
		info["rdma_chunk"] = g[4]
	}
	parts := map[string]float64{}
	for _, p := range reGBps.FindAllStringSubmatch(g[5], -1) {
		if v, ok := finiteFloat(p[1]); ok {
			parts[p[2]] = v
			info[strings.ToLower(p[2])+"_GB/s"] = p[1]
		}
	}
	var s Sample
	if n := reNotifyT.FindStringSubmatch(g[5]); n != nil {
		info["notify_us"] = n[1]
		s.TimeUS = optFloat(n[2], 1)
	} else if n := reTOnly.FindStringSubmatch(g[5]); n != nil {
		s.TimeUS = optFloat(n[1], 1)
	}
	bw, ok := headline(parts, "RDMA", "NVL")
	if !ok {
		return Measurement{}, false
	}
	s.BWAvgBps = F(bw * gbpsToBps)
	return Measurement{Tool: "deepep", OK: true, Test: "normal " + g[1], Info: info, Samples: []Sample{s}}, true
}

// headline is the scale-out part where it is there and not zero, else the
// scale-up part.
func headline(parts map[string]float64, out, up string) (float64, bool) {
	if v, ok := parts[out]; ok && v > 0 {
		return v, true
	}
	v, ok := parts[up]
	return v, ok
}

// deepEPLowLatency reads a low-latency kernel's per-rank line: one
// Measurement, or two for the split dispatch | combine lines.
func deepEPLowLatency(t string) []Measurement {
	ll := func(rank, test string, s Sample, info map[string]string) Measurement {
		if info == nil {
			info = map[string]string{}
		}
		info["version"], info["kernels"] = "V1", "low_latency"
		return Measurement{Tool: "deepep", OK: true, Test: "low_latency " + test, Side: "rank " + rank, Info: info, Samples: []Sample{s}}
	}
	if g := reLLBoth.FindStringSubmatch(t); g != nil {
		return []Measurement{ll(g[1], "dispatch+combine", Sample{BWAvgBps: optFloat(g[2], gbpsToBps),
			LatAvgUS: optFloat(g[3], 1), LatMinUS: optFloat(g[4], 1), LatMaxUS: optFloat(g[5], 1)}, nil)}
	}
	if g := reLLSplit.FindStringSubmatch(t); g != nil {
		return []Measurement{
			ll(g[1], "dispatch", Sample{BWAvgBps: optFloat(g[2], gbpsToBps), LatAvgUS: optFloat(g[3], 1)}, nil),
			ll(g[1], "combine", Sample{BWAvgBps: optFloat(g[4], gbpsToBps), LatAvgUS: optFloat(g[5], 1)}, nil),
		}
	}
	if g := reLLSendRecv.FindStringSubmatch(t); g != nil {
		sum := func(a, b string) *float64 {
			x, ok1 := finiteFloat(a)
			y, ok2 := finiteFloat(b)
			if !ok1 || !ok2 {
				return nil
			}
			return F(x + y)
		}
		return []Measurement{
			ll(g[1], "dispatch send/recv", Sample{TimeUS: sum(g[2], g[3])}, map[string]string{"send_us": g[2], "recv_us": g[3]}),
			ll(g[1], "combine send/recv", Sample{TimeUS: sum(g[4], g[5])}, map[string]string{"send_us": g[4], "recv_us": g[5]}),
		}
	}
	return nil
}

// deepEPV2 reads one of test_ep.py's per-rank lines.
func deepEPV2(line string) (Measurement, bool) {
	g := reV2.FindStringSubmatch(line)
	if g == nil {
		return Measurement{}, false
	}
	so, ok1 := finiteFloat(g[4])
	su, ok2 := finiteFloat(g[5])
	bytes, err := strconv.ParseInt(g[7], 10, 64)
	if !ok1 || !ok2 || err != nil {
		return Measurement{}, false
	}
	ranks, _ := strconv.Atoi(g[2])
	bw, _ := headline(map[string]float64{"SO": so, "SU": su}, "SO", "SU")
	info := map[string]string{"version": "V2", "so_GB/s": g[4], "su_GB/s": g[5], g[8] + "_GB/s": g[9], g[8] + "_us": g[10]}
	return Measurement{Tool: "deepep", OK: true, Test: "v2 " + strings.TrimSpace(g[3]), Side: "rank " + g[1], Ranks: ranks,
		Info: info, Samples: []Sample{{Bytes: bytes, BWAvgBps: F(bw * gbpsToBps), TimeUS: optFloat(g[6], 1)}}}, true
}
