package parsers

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ucxErrors classify UCX ERROR lines and ucx_perftest's own messages.
var ucxErrors = []signature{
	{"Connection refused", ClassConnectionFailed},
	{"failed to setup RTE transport", ClassConnectionFailed},
	{"remote peer failure", ClassConnectionFailed},
	{"Destination is unreachable", ClassConnectionFailed},
	{"Connection reset", ClassConnectionFailed},
	{"Connection timed out", ClassTimeout},
	{"Timeout", ClassTimeout},
	{"No such device", ClassNoDevice},
	{"no such device", ClassNoDevice},
	{"Device is not available", ClassNoDevice},
	{"unsupported memory type", ClassUsageError},
	{"Invalid option argument", ClassUsageError},
	{"should be run with exactly 2 processes", ClassUsageError},
	{"Usage: ucx_perftest", ClassUsageError},
	{"data validation", ClassDataError},
	{"Failed to run test", ClassToolError},
}

type ucxParser struct {
	out      []Measurement
	table    *ucxTable
	info     map[string]string
	test     string
	size     int64
	server   bool
	warnings []string
	errClass ErrorClass
	errLine  string
	nonEmpty bool
	fields   [16]string
	// transport collects UCX_PROTO_INFO / UCX log evidence (transport.go).
	transport transportScan
}

// ParseUCXPerftest reads ucx_perftest output: the server's test box, the
// client's results table with its progress and Final lines, the -f form
// (final line only) and the -v CSV form. Each results table gives one
// Measurement with one Sample from the final line (bandwidth in MB/s, which
// ucx_perftest means as 2^20 bytes, becomes bits/s). The client does not
// print the message size; Bytes is 0 unless the server box is in the same
// text. UCX WARN lines become Warnings; ERROR lines fail the run. With
// UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y the protocol tables say which
// transport carried the data: Transport holds that evidence.
func ParseUCXPerftest(r io.Reader) ([]Measurement, error) {
	p := &ucxParser{info: map[string]string{}}
	sc := newLineScanner(r)
	for sc.Scan() {
		p.line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading ucx_perftest output: %w", err)
	}
	return p.finish(), nil
}

func (p *ucxParser) line(raw string) {
	p.transport.observe(raw)
	line := strings.TrimSpace(stripLogPrefix(CleanLine(raw)))
	if line == "" {
		return
	}
	p.nonEmpty = true
	if level, msg, ok := ucxLogLine(line); ok {
		p.logLine(level, msg)
		return
	}
	switch {
	case strings.HasPrefix(line, "+-"):
		return
	case strings.HasPrefix(line, "|"):
		p.boxLine(line)
		return
	case strings.HasPrefix(line, "iterations,"):
		// The CSV form does not say latency or overhead; the box may.
		p.open(&ucxTable{csv: true, pctl: ucxCSVPercentile(line), latency: strings.Contains(p.test, "latency")})
		return
	case line == "Waiting for connection..." || strings.HasPrefix(line, "Accepted connection from"):
		p.server = true
		return
	}
	if p.table != nil && p.row(line) {
		return
	}
	if s, ok := matchSignature(line, ucxErrors); ok && p.errClass == ClassNone {
		p.errClass, p.errLine = s.class, line
	}
}

// ucxLogLine splits "[sec.usec] [host:pid:tid] file.c:NN UCX  WARN  msg".
func ucxLogLine(line string) (level, msg string, ok bool) {
	i := strings.Index(line, " UCX ")
	if i < 0 || !strings.HasPrefix(line, "[") {
		return "", "", false
	}
	rest := strings.TrimLeft(line[i+len(" UCX "):], " ")
	level, msg, _ = strings.Cut(rest, " ")
	return level, strings.TrimSpace(msg), true
}

func (p *ucxParser) logLine(level, msg string) {
	switch level {
	case "ERROR", "FATAL":
		if p.errClass == ClassNone {
			p.errClass, p.errLine = ClassToolError, msg
			if s, ok := matchSignature(msg, ucxErrors); ok {
				p.errClass = s.class
			}
		}
	case "WARN":
		if len(p.warnings) < ptMaxWarnings {
			p.warnings = append(p.warnings, msg)
		}
	}
}

// boxLine reads the server's test box or the results header.
func (p *ucxParser) boxLine(line string) {
	inner := strings.TrimSpace(strings.Trim(line, "|"))
	switch {
	case strings.Contains(line, "overhead (usec)"):
		p.open(&ucxTable{})
		return
	case strings.Contains(line, "latency (usec)"):
		p.open(&ucxTable{latency: true})
		return
	case strings.Contains(line, "# iterations"):
		if p.table != nil {
			cells := strings.Split(line, "|")
			if len(cells) > 3 {
				p.table.pctl = strings.TrimSpace(cells[3])
			}
			p.table.finalRow = strings.TrimSpace(cells[1]) == "Test"
		}
		return
	}
	k, v, ok := strings.Cut(inner, ":")
	if !ok {
		return
	}
	key, val := infoKey(k), strings.TrimSpace(v)
	if key == "" || val == "" {
		return
	}
	p.info[key] = val
	switch key {
	case "test":
		p.test = val
	case "message_size":
		p.size, _ = strconv.ParseInt(val, 10, 64)
	}
}

func (p *ucxParser) open(t *ucxTable) {
	p.close()
	p.table = t
}

// close turns the open table into a measurement.
func (p *ucxParser) close() {
	t := p.table
	p.table = nil
	if t == nil {
		return
	}
	m := p.measurement()
	m.Side = "client"
	switch {
	case t.final != nil:
		m.Samples = []Sample{*t.final}
	case t.last != nil:
		m.OK, m.ErrorClass = false, ClassTruncated
		m.Error = "output ends before the Final line (figures are the last progress line)"
		m.Samples = []Sample{*t.last}
	default:
		m.OK, m.ErrorClass = false, ClassTruncated
		m.Error = "output ends after the results header, before any result"
	}
	p.out = append(p.out, m)
}

func (p *ucxParser) measurement() Measurement {
	m := Measurement{Tool: "ucx_perftest", OK: true, Test: p.test, Samples: []Sample{}, Warnings: p.warnings}
	m.Info = make(map[string]string, len(p.info))
	for k, v := range p.info {
		m.Info[k] = v
	}
	if len(m.Info) == 0 {
		m.Info = nil
	}
	p.warnings = nil
	return m
}

// finish returns the measurements, each with the transport evidence.
func (p *ucxParser) finish() []Measurement {
	ms := p.measurements()
	if tr := p.transport.result(); tr != nil {
		for i := range ms {
			ms[i].Transport = tr
		}
	}
	return ms
}

func (p *ucxParser) measurements() []Measurement {
	p.close()
	if p.errClass != ClassNone {
		msg := "ucx_perftest: " + p.errLine
		for i := range p.out {
			if p.out[i].OK || p.out[i].ErrorClass == ClassTruncated {
				p.out[i].OK, p.out[i].ErrorClass, p.out[i].Error = false, p.errClass, msg
			}
		}
		if len(p.out) == 0 {
			m := p.measurement()
			m.OK, m.ErrorClass, m.Error = false, p.errClass, msg
			p.out = append(p.out, m)
		}
	}
	if len(p.out) > 0 {
		if len(p.warnings) > 0 {
			last := &p.out[len(p.out)-1]
			last.Warnings = append(last.Warnings, p.warnings...)
		}
		return p.out
	}
	m := p.measurement()
	m.OK = false
	switch {
	case p.test != "" || p.server:
		m.Side, m.ErrorClass = "server", ClassNoResults
		m.Error = "ucx_perftest's server prints no results; parse the client's output"
	case !p.nonEmpty:
		m.ErrorClass, m.Error = ClassNoResults, "ucx_perftest printed nothing"
	default:
		m.ErrorClass, m.Error = ClassUnknownFormat, "no ucx_perftest box, table or Final line found"
	}
	return []Measurement{m}
}
