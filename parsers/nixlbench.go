package parsers

import (
	"io"
	"strings"
)

// ParseNixlbench reads nixlbench output (the initiator's stdout, or a
// merged log of several ranks) and returns one Measurement per run: each
// "NIXLBench Configuration" block and the table below it. READ/WRITE and
// the backend are only stated in that block, so every table is tied to the
// block above it. Both the legacy (≤ 0.5.0) and the current table layouts
// are understood. The error is only for read failures; a failed run is a
// Measurement with OK=false and an ErrorClass.
func ParseNixlbench(r io.Reader) ([]Measurement, error) {
	p := &nixlParser{}
	if err := ncclEachLine(r, p.line); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// nixlParser is the state of one pass over nixlbench output.
type nixlParser struct {
	runs      []*nixlRun
	cur       *nixlRun
	inConfig  bool
	transport transportScan
	lines     int
}

// nixlRun is one configuration block, its table and its failures.
type nixlRun struct {
	runState
	cols   []string // table header columns
	config bool
	target bool // only a target rank's start-up lines were seen
	noRDMA bool // UCCL said it found no RDMA device
}

func (p *nixlParser) run() *nixlRun {
	if p.cur == nil {
		p.cur = &nixlRun{runState: runState{m: Measurement{Tool: "nixlbench", Test: "nixlbench"}}}
		p.runs = append(p.runs, p.cur)
	}
	return p.cur
}

// nextRun starts a new run when the current one already holds a table.
func (p *nixlParser) nextRun() *nixlRun {
	if c := p.cur; c != nil && (c.cols != nil || len(c.m.Samples) > 0 || c.fail) {
		p.cur = nil
	}
	return p.run()
}

// line handles one raw line.
func (p *nixlParser) line(raw string) {
	line := strings.TrimSpace(stripLogPrefix(CleanLine(raw)))
	if line == "" {
		return
	}
	p.lines++
	switch {
	case strings.HasPrefix(line, "***"):
	case strings.Contains(line, "# "+nixlProbe+" version "):
		// Anywhere in the line: a C library's buffered stdout (UCX's
		// tables) can end mid-line just before it, as in captures of the
		// native initiator made before it flushed C's stdout first.
		p.probeBanner(line[strings.Index(line, "# "+nixlProbe+" version ")+2:])
	case line == "NIXLBench Configuration", line == nixlProbe+" Configuration":
		if c := p.nextRun(); c.config {
			p.cur = nil
		}
		p.run().config = true
		p.inConfig = true
	case p.inConfig && strings.HasPrefix(line, "---"):
		p.inConfig = false
	case p.inConfig && !strings.HasPrefix(line, "Block Size (B)"):
		p.configLine(line)
	case strings.HasPrefix(line, "Block Size (B)"):
		p.inConfig = false
		r := p.run()
		if r.cols != nil || len(r.m.Samples) > 0 {
			r = p.nextRun()
		}
		r.cols = nixlColumns(line)
	case strings.HasPrefix(line, "---"):
	case line[0] >= '0' && line[0] <= '9' && p.rowLine(line):
	default:
		p.otherLine(raw, line)
	}
}

// nixlProbe is rdmabench's NIXL probe (cmd/rdmabench-nixl): nixlbench's
// configuration block and table under a banner of its own, "# rdmabench-nixl
// version 1 role=initiator nixl=0.9.0 ucx=1.20.0 backend=UCX …".
const nixlProbe = "rdmabench-nixl"

// probeBanner starts a run of the probe: the banner comes first, once per
// process, so a run that already holds results belongs to another process.
func (p *nixlParser) probeBanner(body string) {
	r := p.nextRun()
	if r.config {
		r = p.nextRun()
	}
	r.m.Tool, r.m.Test = nixlProbe, nixlProbe
	f := strings.Fields(body)
	if len(f) >= 3 {
		r.m.Version = f[2]
	}
	for _, kv := range f[3:] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			ncclSetInfo(&r.m, strings.ReplaceAll(k, "-", "_"), v)
		}
	}
	if role := r.m.Info["role"]; role == "target" {
		r.target = true
	} else if role == "initiator" {
		r.m.Side = "initiator"
	}
}

// configLine reads "Op type (--op_type=[READ,WRITE])        : WRITE".
func (p *nixlParser) configLine(line string) {
	i := strings.Index(line, ": ")
	if i < 0 {
		return
	}
	label, value := strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+2:])
	key := nixlConfigKey(label)
	r := p.run()
	ncclSetInfo(&r.m, key, value)
	switch key {
	case "backend":
		r.m.Backend = value
	case "op_type":
		r.m.Op = strings.ToUpper(value)
	}
}

// nixlConfigKey names an option by its flag ("(--op_type=" → op_type), or
// by its label when it has none ("ETCD Endpoint" → etcd_endpoint).
func nixlConfigKey(label string) string {
	if i := strings.Index(label, "(--"); i >= 0 {
		k := label[i+3:]
		if j := strings.IndexAny(k, "=)"); j >= 0 {
			k = k[:j]
		}
		return strings.ReplaceAll(k, "-", "_")
	}
	return strings.ReplaceAll(strings.ToLower(label), " ", "_")
}

// nixlColumns splits a header on runs of two or more blanks: the column
// names themselves contain single spaces ("Avg Lat. (us)").
func nixlColumns(line string) []string {
	var cols []string
	for _, part := range strings.Split(strings.ReplaceAll(line, "\t", "  "), "  ") {
		if part = strings.TrimSpace(part); part != "" {
			cols = append(cols, part)
		}
	}
	return cols
}
