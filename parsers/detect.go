package parsers

import (
	"bytes"
	"regexp"
	"strings"
)

// detectRule is one piece of evidence: a line containing text means tool.
// Strong evidence decides at once; weak evidence (UCX log lines, which
// nixlbench and NCCL logs also carry) only when nothing else matched.
type detectRule struct {
	text   string
	tool   string
	strong bool
}

// detectRules are checked on every cleaned line, in order.
var detectRules = []detectRule{
	{"NIXLBench Configuration", "nixlbench", true},
	{"ETCD Runtime: Registered as rank", "nixlbench", true},
	{"Init nixl worker", "nixlbench", true},
	{"Block Size (B)", "nixlbench", true},
	{"nccl-tests version", "nccl-tests", true},
	{"rccl-tests version", "nccl-tests", true},
	{"# nThread ", "nccl-tests", true},
	{"# Avg bus bandwidth", "nccl-tests", true},
	{"(B)    (elements)", "nccl-tests", true},
	{"Test NCCL failure", "nccl-tests", true},
	{"ping data: rdma-ping-", "rping", true},
	{"cma event RDMA_CM_EVENT_", "rping", true},
	{"No RDMA devices were detected", "rping", true},
	{"DISCONNECT EVENT...", "rping", true},
	{"rdma_resolve_addr - rdma_resolve_route", "rping", true},
	{"| API:", "ucx_perftest", true},
	{"overhead (usec)", "ucx_perftest", true},
	{"latency (usec)", "ucx_perftest", true},
	{"_percentile_lat,avg_lat,overall_lat", "ucx_perftest", true},
	{"Accepted connection from", "ucx_perftest", true},
	{"Connecting to host", "iperf3", true},
	{"Server listening on", "iperf3", true},
	{"iperf Done.", "iperf3", true},
	{"iperf3: error", "iperf3", true},
	{"Waiting for client to connect...", "perftest", false},
	{"Failed to connect to ETCD", "nixlbench", false},
	{"Failed to store agent", "nixlbench", false},
	{"NCCL INFO", "nccl-tests", false},
	{"perftest.c:", "ucx_perftest", false},
	{"Waiting for connection...", "ucx_perftest", false},
	{"created cm_id", "rping", false},
	{"#bytes", "perftest", false},
	{"Couldn't connect to ", "perftest", false},
	{"Unable to init the socket connection", "perftest", false},
	{"Parser function exited with Error", "perftest", false},
	{"Did not detect devices", "perftest", false},
	{"Couldn't create IB resources", "perftest", false},
	{"Unable to find the Infiniband/RoCE device", "perftest", false}, // after "IB device rxe9 not found"
	{"No IB devices found", "perftest", false},
	{" UCX  ", "ucx_perftest", false},
}

var (
	collectiveRe = regexp.MustCompile(`Collective test (?:starting|concluded): ([a-z_]+_perf)`)
	perfNameRe   = regexp.MustCompile(`\b([a-z]+(?:_[a-z]+)*_perf)\b`)
	ncclRowRe    = regexp.MustCompile(`^\d+\s+\d+\s+(?:float|half|double|bfloat16|u?int8|u?int32|u?int64|fp8_e4m3|fp8_e5m2)\s+(?:sum|prod|max|min|avg|none)\s`)
	ptBinaryRe   = regexp.MustCompile(`\bib_(?:write|read|send|atomic)_(?:bw|lat)\b`)
	ptJSONTestRe = regexp.MustCompile(`"test"\s*:\s*"([A-Za-z_]+)"`)
)

// Detect guesses which tool printed head (the start of a capture; 64 KiB is
// plenty) from the marks each tool leaves: perftest banners, rping lines,
// the nixlbench configuration block, the nccl-tests header, the
// ucx_perftest box and table, iperf3's JSON or text. It returns a name
// Parse accepts: the binary where the text says it (ib_send_lat,
// all_gather_perf), else the family ("perftest", "nccl-tests").
func Detect(head []byte) (string, bool) {
	if t := bytes.TrimSpace(head); len(t) > 0 && t[0] == '{' {
		return detectJSON(t)
	}
	weak := ""
	for _, raw := range strings.Split(string(head), "\n") {
		line := strings.TrimSpace(CleanLine(raw))
		if line == "" {
			continue
		}
		if title, ok := ptTitle(line); ok {
			return ptToolFromTitle(title, ptLayout{}), true
		}
		if m := collectiveRe.FindStringSubmatch(line); m != nil {
			if _, known := FamilyOf(m[1]); known {
				return m[1], true
			}
			return "nccl-tests", true // a collective this list does not name
		}
		for _, r := range detectRules {
			if !strings.Contains(line, r.text) {
				continue
			}
			if r.strong {
				return refine(r.tool, head), true
			}
			if weak == "" {
				weak = r.tool
			}
		}
		if weak == "" && ncclRowRe.MatchString(line) {
			weak = "nccl-tests"
		}
	}
	return refine(weak, head), weak != ""
}

// refine names the binary when the family's text does not but a command
// line in the capture does ("$ ib_write_bw -d mlx5_0", "all_gather_perf -b 8").
func refine(tool string, head []byte) string {
	// Only these two families' output leaves the binary unnamed (one layout, many programs).
	if tool == "perftest" {
		if m := ptBinaryRe.Find(head); m != nil {
			return string(m)
		}
		return tool
	}
	if tool != "nccl-tests" {
		return tool
	}
	if m := perfNameRe.FindSubmatch(head); m != nil {
		if _, ok := FamilyOf(string(m[1])); ok {
			return string(m[1])
		}
	}
	return tool
}

// detectJSON tells perftest --out_json, iperf3 -J and nccl-tests -J apart.
func detectJSON(t []byte) (string, bool) {
	s := string(t)
	switch {
	case strings.Contains(s, `"test_info"`):
		if m := ptJSONTestRe.FindStringSubmatch(s); m != nil {
			if tool := ptToolFromTitle(ptJSONTitle(m[1]), ptLayout{}); tool != "perftest" {
				return tool, true
			}
		}
		return "perftest", true
	case strings.Contains(s, `"nccl_version"`) || strings.Contains(s, `"average_bus_bandwidth"`) ||
		strings.Contains(s, `"nthreads"`):
		return refine("nccl-tests", t), true
	case strings.Contains(s, `"start"`) && (strings.Contains(s, `"test_start"`) ||
		strings.Contains(s, `"iperf`) || strings.Contains(s, `"intervals"`) || strings.Contains(s, `"connecting_to"`)):
		return "iperf3", true
	}
	return "", false
}
