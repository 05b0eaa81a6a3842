package parsers

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

// Family is the group of binaries one parser reads: every perftest binary
// prints the same layout, every nccl-tests *_perf binary too. The families
// and which programs belong to each are the tool table's (package tool).
type Family = tool.Family

// Tool families (package tool's, named here for the parsers' readers).
const (
	FamilyPerftest    = tool.FamilyPerftest
	FamilyRping       = tool.FamilyRping
	FamilyUCXPerftest = tool.FamilyUCXPerftest
	FamilyIperf3      = tool.FamilyIperf3
	FamilyNixlbench   = tool.FamilyNixlbench
	FamilyNCCL        = tool.FamilyNCCL
	FamilyDeepEP      = tool.FamilyDeepEP
)

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
	case FamilyDeepEP:
		return ParseDeepEP
	}
	return nil
}

// Tools lists every tool name Parse accepts, sorted; error messages and
// `rdmabench parse` show it.
func Tools() []string { return tool.Programs() }

// FamilyOf returns the family of a tool name.
func FamilyOf(program string) (Family, bool) { return tool.FamilyOf(program) }

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
	fam, ok := FamilyOf(tool)
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
	if fam == FamilyNCCL { // the NCCL parser's own layout: the binary is in Test (its collective), Tool is the family
		said = m.Test
	}
	if f, ok := FamilyOf(said); !ok || f != fam || said == string(fam) {
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
