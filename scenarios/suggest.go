package scenarios

import (
	"fmt"
	"strings"
)

// editDistance is the Levenshtein distance between a and b, compared
// case-insensitively (so "UCx" is close to "UCX").
func editDistance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// nearest returns the candidate closest to word, or "" when none is close
// enough to be a plausible typo (at most a third of the word, at least 2).
func nearest(word string, candidates []string) string {
	best, bestD := "", -1
	limit := max(2, len([]rune(word))/3)
	for _, c := range candidates {
		d := editDistance(word, c)
		if strings.EqualFold(word, c) {
			d = 0
		}
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// Nearest is nearest for other packages (the CLI's --tool, enum flags),
// and, when no name is within typing distance, the one candidate that
// contains the word (write_bw → ib_write_bw): a part of a name is a
// plausible way to remember it. Words under 4 letters match nothing that way.
func Nearest(word string, candidates []string) string {
	if n := nearest(word, candidates); n != "" {
		return n
	}
	if len(word) < 4 {
		return ""
	}
	found := ""
	for _, c := range candidates {
		if strings.Contains(strings.ToLower(c), strings.ToLower(word)) {
			if found != "" {
				return ""
			}
			found = c
		}
	}
	return found
}

// toolAliases are names people give a tool that are not ours: its package,
// its family, a short form. Each leads to a tool name with why.
var toolAliases = map[string]struct{ tool, why string }{
	"nccl-tests": {ToolNCCL, "nccl-tests: tool: nccl with args.collective, or the binary name such as all_reduce_perf"},
	"nccl_tests": {ToolNCCL, "nccl-tests: tool: nccl with args.collective, or the binary name such as all_reduce_perf"},
	"nccltests":  {ToolNCCL, "nccl-tests: tool: nccl with args.collective, or the binary name such as all_reduce_perf"},
	"perftest": {"ib_write_bw", "perftest is the package: name one of its tools, " +
		"ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat, ib_send_lat"},
	"ucx":             {"ucx_perftest", "UCX is measured with ucx_perftest"},
	"ucx_perf":        {"ucx_perftest", "UCX is measured with ucx_perftest"},
	"nixl":            {"nixlbench", "NIXL is measured with nixlbench"},
	"iperf":           {"iperf3", "iperf (version 2) is not supported; iperf3 is"},
	"ib_bw":           {"ib_write_bw", "perftest's bandwidth tools are ib_write_bw, ib_read_bw, ib_send_bw"},
	"ib_lat":          {"ib_write_lat", "perftest's latency tools are ib_write_lat, ib_read_lat, ib_send_lat"},
	"ibv_rc_pingpong": {"ib_send_lat", "ping-pong latency over RC: ib_send_lat"},
}

// ToolSuggestion is the hint for an unknown tool name: an alias's tool
// with why, else the nearest name, and the list of tools.
func ToolSuggestion(word string) string {
	list := "tools are: " + strings.Join(Tools, ", ")
	if a, ok := toolAliases[strings.ToLower(word)]; ok {
		return fmt.Sprintf("did you mean %q? (%s) %s", a.tool, a.why, list)
	}
	if n := Nearest(toolShorthand.Replace(strings.ToLower(word)), Tools); n != "" {
		return fmt.Sprintf("did you mean %q? %s", n, list)
	}
	return list
}

// toolShorthand writes a tool's words as its name does (perftest's
// ib_write_bandwidth is ib_write_bw).
var toolShorthand = strings.NewReplacer("bandwidth", "bw", "latency", "lat")

// valueAliases are what people call a value of ours: a backend by what it
// runs on. One leads to its value only where that value is allowed.
var valueAliases = map[string]string{
	"kubernetes": BackendKube, "k8s": BackendKube, "openshift": BackendKube, "ocp": BackendKube, "pod": BackendKube, "pods": BackendKube,
	"localhost": BackendLocal, "host": BackendLocal,
}

// suggest builds the hint for a value that is not one of the known ones:
// `did you mean "decode"? pools are: prefill, decode`.
func suggest(word, kind string, known []string) string {
	list := kind + " are: " + strings.Join(known, ", ")
	if len(known) == 0 {
		list = "there are no " + kind
	}
	n := nearest(word, known)
	if a, ok := valueAliases[strings.ToLower(word)]; ok && contains(known, a) {
		n = a
	}
	if n != "" {
		return fmt.Sprintf("did you mean %q? %s", n, list)
	}
	return list
}
