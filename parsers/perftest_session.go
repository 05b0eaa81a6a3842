package parsers

import (
	"fmt"
	"strconv"
	"strings"
)

// ptSession is what perftest printed for one process: the banner, the
// header block and any failure. A capture may hold several.
type ptSession struct {
	title  string
	info   map[string]string
	shared bool // info is referenced by an emitted measurement: copy before writing
	server bool // "Waiting for client to connect" seen
	titles int  // banners seen (2 when two processes interleave)
	// interleaved: two table headers back to back, two processes' output
	interleaved bool
	emitted     []int
	errClass    ErrorClass
	errLine     string
	report      string // "local" / "remote" for --report-both
}

func newPtSession() *ptSession { return &ptSession{info: make(map[string]string, 24)} }

// writableInfo copies the header facts before changing them if an emitted
// measurement already holds them.
func (s *ptSession) writableInfo() map[string]string {
	if s.shared {
		c := make(map[string]string, len(s.info)+2)
		for k, v := range s.info {
			c[k] = v
		}
		s.info, s.shared = c, false
	}
	return s.info
}

// closeTable turns the open table into a measurement (its twin, if any,
// becomes the open table); terminated says the closing separator (or a
// following table) was seen.
func (p *ptParser) closeTable(terminated bool) {
	t := p.table
	p.table, p.twin = p.twin, nil
	if t == nil || (t.rows() == 0 && !t.elided) {
		return
	}
	m := Measurement{
		Tool:     ptToolFromTitle(p.sess.title, t.layout),
		OK:       true,
		Side:     p.side(),
		Test:     p.sess.title,
		Samples:  t.samples,
		Warnings: t.warnings,
	}
	if m.Samples == nil {
		m.Samples = []Sample{}
	}
	info := p.sess.writableInfo()
	delete(info, "report")
	if t.layout.unit != "" {
		info["bw_unit"] = t.layout.unit
	}
	if p.sess.report != "" {
		info["report"] = p.sess.report
	}
	m.Info, p.sess.shared = info, true
	switch {
	case len(t.unmeasured) > 0 && len(t.samples) == 0:
		// Rows kept (their sizes and iterations say what crossed the wire),
		// but none is a measurement.
		m.OK, m.ErrorClass, m.Samples = false, ClassClock, t.unmeasured
		m.Error = "perftest printed no figures (0 or inf) for " + sizesText(t.unmeasured) + ": " + p.noClockReason()
	case len(t.unmeasured) > 0:
		m.Unmeasured = t.unmeasured
		m.Warnings = append(m.Warnings, "left out "+sizesText(t.unmeasured)+", printed without figures: "+p.noClockReason())
	}
	switch {
	case m.ErrorClass == ClassClock:
	case t.elided:
		m.OK, m.ErrorClass = false, ClassTruncated
		m.Error = fmt.Sprintf("table elided after %d rows (\"...\" in place of rows)", len(t.samples))
	case !terminated:
		m.OK, m.ErrorClass = false, ClassTruncated
		m.Error = fmt.Sprintf("output ends inside the table after %d rows, without its closing line", len(t.samples))
	}
	p.sess.emitted = append(p.sess.emitted, len(p.out))
	p.out = append(p.out, m)
}

// side says which process printed the table: the server when the
// "Waiting for client" banner was seen, else the client. Two interleaved
// processes (run_perftest_loopback) give server then client.
func (p *ptParser) side() string {
	s := p.sess
	two := s.titles >= 2 || s.interleaved
	switch {
	case s.server && (!two || len(s.emitted) == 0):
		return "server"
	case s.titles > 0 || two:
		return "client"
	}
	return ""
}

// endSession applies the session's failure to its tables, or records the
// failure on its own when no table came.
func (p *ptParser) endSession() {
	s := p.sess
	if s.errClass == ClassNone {
		return
	}
	msg := "perftest: " + s.errLine
	if len(s.emitted) == 0 {
		m := failed(ptToolFromTitle(s.title, ptLayout{}), s.errClass, msg)
		m.Test = s.title
		if s.server {
			m.Side = "server"
		}
		p.out = append(p.out, m)
		return
	}
	for _, i := range s.emitted {
		if p.out[i].OK || p.out[i].ErrorClass == ClassTruncated {
			p.out[i].OK, p.out[i].ErrorClass, p.out[i].Error = false, s.errClass, msg
		}
	}
}

func (p *ptParser) finish() []Measurement {
	headerOnly := p.table != nil && p.table.rows() == 0 && !p.table.elided
	for p.table != nil {
		p.closeTable(false)
	}
	p.endSession()
	if len(p.out) > 0 {
		return p.out
	}
	s := p.sess
	tool := ptToolFromTitle(s.title, ptLayout{})
	switch {
	case !p.nonEmpty:
		return []Measurement{failed(tool, ClassNoResults, "perftest printed nothing")}
	case !p.sawAny && p.bareNumbers:
		return []Measurement{failed(tool, ClassUnknownFormat,
			"only bare numbers: --output=bandwidth|message_rate|latency prints no sizes or units; run perftest with its full output")}
	case !p.sawAny:
		return []Measurement{failed(tool, ClassUnknownFormat, "no perftest banner, table or message found")}
	case strings.HasPrefix(s.title, "RDMA_Read Latency") && s.server:
		m := failed(tool, ClassNoResults, "ib_read_lat's server prints no results; parse the client's output")
		m.Side, m.Test = "server", s.title
		return []Measurement{m}
	case headerOnly:
		return []Measurement{failed(tool, ClassTruncated, "output ends after the table header, before any row")}
	case s.titles > 0:
		return []Measurement{failed(tool, ClassTruncated, "output ends after the header block, before any result")}
	}
	return []Measurement{failed(tool, ClassTruncated, "server waited for a client; output ends before any result")}
}

// noClockReason says why perftest printed rows without figures.
func (p *ptParser) noClockReason() string {
	return noClockReason(p.clockLine)
}

// noClockReason says why perftest printed rows without figures, given its
// calibration failure line ("" when none was seen).
func noClockReason(clockLine string) string {
	const consequence = "; under -F perftest prints these instead of stopping. Not a measurement of the fabric: "
	if clockLine != "" {
		return "it had no CPU clock rate to turn cycles into time: its clock calibration failed (\"" + clockLine +
			"\": the host's timer was too noisy, as on an overloaded VM)" + consequence + "run it again on a less loaded host"
	}
	return "it had no CPU clock rate to turn cycles into time (no \"cpu MHz\" in /proc/cpuinfo, as some VMs and " +
		"containers show it, or a failed clock calibration whose message was not captured)" + consequence +
		"run it where /proc/cpuinfo gives \"cpu MHz\", or on a less loaded host"
}

// sizesText names the sizes of rows: "size 65536", "sizes 2, 4 and 8".
func sizesText(rows []Sample) string {
	sizes := make([]string, len(rows))
	for i, s := range rows {
		sizes[i] = strconv.FormatInt(s.Bytes, 10)
	}
	switch n := len(sizes); {
	case n == 1:
		return "size " + sizes[0]
	case n > 6:
		return fmt.Sprintf("%d sizes (%s to %s)", n, sizes[0], sizes[n-1])
	}
	return "sizes " + strings.Join(sizes[:len(sizes)-1], ", ") + " and " + sizes[len(sizes)-1]
}
