package parsers

import (
	"strings"
)

// ncclParser is the state of one pass over nccl-tests text output.
type ncclParser struct {
	runs      []*ncclRun
	cur       *ncclRun
	transport transportScan
	command   string // test name seen on a command line before any banner
	lines     int    // non-blank lines seen
	lastWarn  string // latest "NCCL WARN" message, to explain a failure
	version   string // "NCCL version …" from an INFO line
	fields    []string
	launcher  []string // an MPI launcher's refusal, its first lines
	inLaunch  bool     // inside that refusal's text
}

// ncclRun collects one run: banner, device list, table and footer.
type ncclRun struct {
	runState
	layout    *ncclLayout
	header    bool // the column header was seen
	banner    bool
	footer    bool
	maxRank   int
	hosts     []string
	gpus      []string
	wrongRows int
	starRows  int // rows with an error marked '*' (above the tool's threshold)
}

func (p *ncclParser) run() *ncclRun {
	if p.cur == nil {
		p.cur = &ncclRun{runState: runState{m: Measurement{Tool: "nccl-tests", Test: p.command}}, maxRank: -1}
		p.runs = append(p.runs, p.cur)
	}
	return p.cur
}

// newRunIfUsed starts a new run at a banner line when the current one
// already has a table: several runs may share one capture.
func (p *ncclParser) newRunIfUsed() *ncclRun {
	if c := p.cur; c != nil && (c.header || c.footer || len(c.m.Samples) > 0 || c.fail) {
		p.cur = nil
	}
	return p.run()
}

// line handles one raw line of output.
func (p *ncclParser) line(raw string) {
	if i := strings.Index(raw, "NCCL INFO "); i >= 0 {
		p.transport.observeInfo(raw, i)
		if p.version == "" {
			p.infoLine(raw)
		}
		return
	}
	line := strings.TrimSpace(stripLogPrefix(CleanLine(raw)))
	if line == "" {
		return
	}
	p.lines++
	switch c := line[0]; {
	case c == '#':
		p.commentLine(line)
	case c >= '0' && c <= '9', c == '[':
		if !p.rowLine(line) {
			p.otherLine(raw, line)
		}
	default:
		p.otherLine(raw, line)
	}
}

// infoLine keeps the NCCL version an INFO line states.
func (p *ncclParser) infoLine(raw string) {
	if i := strings.Index(raw, "NCCL INFO NCCL version "); i >= 0 {
		p.version = strings.TrimSpace(raw[i+len("NCCL INFO NCCL version "):])
	}
}

// rowLine parses a table row; false when the line is not one.
func (p *ncclParser) rowLine(line string) bool {
	if strings.IndexByte(line, '[') >= 0 {
		line = ncclStripRankTags(line)
	}
	starred := strings.IndexByte(line, '*') >= 0
	if starred {
		// rccl-tests marks an error above its threshold with '*'.
		line = strings.ReplaceAll(line, "*", " ")
	}
	p.fields = ncclFields(p.fields[:0], line)
	f := p.fields
	if len(f) < 4 || !isDigits(f[0]) {
		return false
	}
	r := p.run()
	lay := r.layout
	if lay == nil {
		lay = ncclGuessLayout(len(f))
		if lay == nil {
			return false
		}
	}
	s, ok := lay.parseRow(f)
	if !ok {
		return false
	}
	if ncclSampleWrong(s) {
		r.wrongRows++
	}
	if starred {
		r.starRows++
	}
	r.m.Samples = append(r.m.Samples, s)
	return true
}

// ncclFields is strings.Fields for blank- and tab-separated rows, reusing
// dst so that rows cost no allocation.
func ncclFields(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f' {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// ncclStripRankTags removes "[0]" tags that per-write launchers put inside
// rows (nccl-tests prints a row with three printf calls).
func ncclStripRankTags(line string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(line, '[')
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		j := strings.IndexByte(line[i:], ']')
		if j < 0 || !isDigits(line[i+1:i+j]) {
			b.WriteString(line[:i+1])
			line = line[i+1:]
			continue
		}
		b.WriteString(line[:i])
		b.WriteByte(' ')
		line = line[i+j+1:]
	}
}

func ncclSetInfo(m *Measurement, k, v string) {
	if v == "" {
		return
	}
	if m.Info == nil {
		m.Info = map[string]string{}
	}
	m.Info[k] = v
}

// finish closes every run and returns the measurements.
func (p *ncclParser) finish() []Measurement {
	t := p.transport.result()
	if len(p.runs) == 0 {
		m := Measurement{Tool: "nccl-tests", Test: p.command, OK: false, ErrorClass: ClassNoResults,
			Error: "no nccl-tests output found (no banner, table or failure line)", Samples: []Sample{}, Transport: t}
		switch {
		case len(p.launcher) > 0:
			m.ErrorClass = ClassLauncher
			m.Error = "mpirun: " + strings.Join(p.launcher, " ")
		case p.lines > 0:
			m.ErrorClass = ClassUnknownFormat
			m.Error = "text is not nccl-tests output: no banner, column header, result row or failure line"
		}
		return []Measurement{m}
	}
	out := make([]Measurement, 0, len(p.runs))
	for _, r := range p.runs {
		r.close()
		if r.m.Info["nccl_version"] == "" {
			ncclSetInfo(&r.m, "nccl_version", p.version)
		}
		r.m.Transport = t
		if t == nil {
			r.m.Transport = ncclCopyTransport(r.m.Info["copy_p2p"])
		}
		out = append(out, r.m)
	}
	return out
}

// ncclCopyTransport is what carried the probe's copy (rdmabench-nccl
// --collective copy, no NCCL and so no NCCL log), from its banner's
// copy-p2p: GPU peer-to-peer where peer access was enabled (NVLink or PCIe
// P2P), host memory where the driver staged the copy; nil for any other run.
func ncclCopyTransport(p2p string) *Transport {
	switch p2p {
	case "direct":
		return &Transport{Kind: TransportP2P, Source: "cuda", Detail: "cuMemcpyPeer, peer access (NVLink or PCIe peer-to-peer)", Evidence: []string{"copy-p2p=direct"}}
	case "staged":
		return &Transport{Kind: TransportShm, Source: "cuda", Detail: "cuMemcpyPeer staged through host memory (no peer access)", Evidence: []string{"copy-p2p=staged"}}
	}
	return nil
}
