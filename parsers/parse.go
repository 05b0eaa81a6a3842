package parsers

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Family is the group of binaries one parser reads: every perftest binary
// prints the same layout, every nccl-tests *_perf binary too.
type Family string

// Tool families.
const (
	FamilyPerftest    Family = "perftest"
	FamilyRping       Family = "rping"
	FamilyUCXPerftest Family = "ucx_perftest"
	FamilyIperf3      Family = "iperf3"
	FamilyNixlbench   Family = "nixlbench"
	FamilyNCCL        Family = "nccl-tests"
)

// toolFamilies maps every binary name Parse accepts to its family. The
// family names themselves are accepted too, for output whose exact binary
// is not known (a fragment without a banner).
var toolFamilies = map[string]Family{
	"perftest":    FamilyPerftest,
	"ib_write_bw": FamilyPerftest, "ib_read_bw": FamilyPerftest, "ib_send_bw": FamilyPerftest,
	"ib_atomic_bw": FamilyPerftest, "ib_write_lat": FamilyPerftest, "ib_read_lat": FamilyPerftest,
	"ib_send_lat": FamilyPerftest, "ib_atomic_lat": FamilyPerftest,
	"rping":           FamilyRping,
	"ucx_perftest":    FamilyUCXPerftest,
	"iperf3":          FamilyIperf3,
	"nixlbench":       FamilyNixlbench,
	"nccl-tests":      FamilyNCCL,
	"all_reduce_perf": FamilyNCCL, "all_gather_perf": FamilyNCCL, "reduce_scatter_perf": FamilyNCCL,
	"alltoall_perf": FamilyNCCL, "alltoallv_perf": FamilyNCCL, "sendrecv_perf": FamilyNCCL,
	"broadcast_perf": FamilyNCCL, "reduce_perf": FamilyNCCL, "gather_perf": FamilyNCCL,
	"scatter_perf": FamilyNCCL, "hypercube_perf": FamilyNCCL,
}

// parserFor is the one place that ties a family to its parser.
func parserFor(f Family) func(io.Reader) ([]Measurement, error) {
	switch f {
	case FamilyPerftest:
		return parsePerftestAny
	case FamilyRping:
		return ParseRping
	case FamilyUCXPerftest:
		return ParseUCXPerftest
	case FamilyIperf3:
		return ParseIperf3
	case FamilyNixlbench:
		return ParseNixlbench
	case FamilyNCCL:
		return ParseNCCL
	}
	return nil
}

// Tools lists every tool name Parse accepts, sorted; error messages and
// `rdmabench parse` show it.
func Tools() []string {
	out := make([]string, 0, len(toolFamilies))
	for t := range toolFamilies {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// FamilyOf returns the family of a tool name.
func FamilyOf(tool string) (Family, bool) {
	f, ok := toolFamilies[tool]
	return f, ok
}

// UnknownToolError is returned by Parse for a tool name it does not know.
type UnknownToolError struct{ Tool string }

// Error names the tool and lists the known ones, so the fix is in the message.
func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("unknown tool %q; known tools: %s", e.Tool, strings.Join(Tools(), ", "))
}

// Parse reads the output of the named tool (a binary name such as
// ib_write_bw, rping, ucx_perftest, iperf3, nixlbench or all_reduce_perf)
// and returns its measurements, each with Tool set to that name (a family
// name such as "perftest" keeps what the output itself says). A failed run
// is a Measurement with OK false, not an error; the error is for an
// unknown tool or a failing reader.
func Parse(tool string, r io.Reader) ([]Measurement, error) {
	fam, ok := toolFamilies[tool]
	if !ok {
		return nil, &UnknownToolError{Tool: tool}
	}
	parse := parserFor(fam)
	if parse == nil {
		return nil, fmt.Errorf("no parser for the %s family", fam)
	}
	ms, err := parse(r)
	if err != nil {
		return nil, err
	}
	if tool != string(fam) {
		for i := range ms {
			if said := ownName(ms[i], fam); said != "" && said != tool {
				ms[i].Warnings = append(ms[i].Warnings,
					"the output says "+said+", not "+tool+" as asked: figures are "+said+"'s")
			}
			ms[i].Tool = tool
		}
	}
	return ms, nil
}

// ownName is the binary a measurement's own text names (perftest banner,
// nccl-tests "Collective test starting"), or "" when it names none.
func ownName(m Measurement, fam Family) string {
	said := m.Tool
	if fam == FamilyNCCL {
		said = m.Test
	}
	if f, ok := toolFamilies[said]; !ok || f != fam || said == string(fam) {
		return ""
	}
	return said
}

// parsePerftestAny reads perftest text, or an --out_json file (assumed
// MiB/s: the file does not carry the unit; see ParsePerftestJSON).
func parsePerftestAny(r io.Reader) ([]Measurement, error) {
	br := bufio.NewReader(r)
	for {
		b, err := br.Peek(1)
		if err != nil {
			break
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			_, _ = br.ReadByte()
			continue
		}
		if b[0] == '{' {
			ms, err := ParsePerftestJSON(br, PerftestMiB)
			for i := range ms {
				ms[i].Warnings = append(ms[i].Warnings,
					"perftest JSON does not state its unit; BW read as MiB/s (wrong if the run used --report_gbits)")
			}
			return ms, err
		}
		break
	}
	return ParsePerftest(br)
}
