package parsers

import (
	"fmt"
	"io"
	"strings"
	"unsafe"
)

// ParsePerftest reads the text output of ib_write_bw, ib_read_bw,
// ib_send_bw, ib_write_lat, ib_read_lat or ib_send_lat (either side, or
// both interleaved in one file) and returns one Measurement per result
// table. Bandwidth columns in MB/sec or MiB/sec (both 2^20 bytes) and Gb/sec
// (10^9 bits) become bits per second. A run that failed yields ok=false
// with an error class; a table cut short keeps its rows but is not ok.
// The error is only for a failing reader.
func ParsePerftest(r io.Reader) ([]Measurement, error) {
	p := &ptParser{sess: newPtSession()}
	sc := newLineScanner(r)
	for sc.Scan() {
		// The line aliases the scanner's buffer (no copy per line); every
		// string kept beyond this call is cloned where it is stored.
		if b := sc.Bytes(); len(b) > 0 {
			p.line(unsafe.String(&b[0], len(b)))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading perftest output: %w", err)
	}
	return p.finish(), nil
}

// ptTable is a result table being read.
type ptTable struct {
	layout   ptLayout
	samples  []Sample
	warnings []string
	elided   bool
	last     int64 // size of the last row, measured or not
	// unmeasured are rows without a single non-zero figure: perftest had
	// no CPU clock rate (see clockLine) and printed 0 or inf for all.
	unmeasured []Sample
}

// rows counts the table's rows, measured or not.
func (t *ptTable) rows() int { return len(t.samples) + len(t.unmeasured) }

type ptParser struct {
	out      []Measurement
	sess     *ptSession
	table    *ptTable
	twin     *ptTable // second table when two processes print interleaved (run_perftest_loopback)
	warnings []string
	sawAny   bool // any perftest structure at all
	nonEmpty bool
	// bareNumbers: every line so far is one number (--output=bandwidth …)
	bareNumbers bool
	// clockLine is perftest's "Correlation coefficient r^2: … < 0.9": its
	// clock calibration failed, and with -F it goes on with a rate of 0.
	clockLine string
	fields    [32]string
	slab      floatSlab
	keys      map[string]string   // header label → Info key, labels repeat run after run
	strs      map[string]string   // interned header values ("ON", "mlx5_0" …)
	layouts   map[string]ptLayout // table headers seen, by their text
}

func (p *ptParser) line(raw string) {
	line := strings.TrimSpace(stripLogPrefix(CleanLine(raw)))
	if line == "" {
		return
	}
	if !p.nonEmpty {
		p.bareNumbers = true
	}
	p.nonEmpty = true
	if p.bareNumbers {
		_, ok := finiteFloat(line)
		p.bareNumbers = ok
	}
	switch {
	case isDashLine(line):
		p.separator()
		return
	case strings.HasPrefix(line, "#bytes"):
		if l, ok := p.layout(line); ok {
			p.sawAny = true
			p.header(l)
			return
		}
	}
	if p.table != nil {
		if s, ok := p.table.layout.row(splitWS(line, p.fields[:0]), &p.slab); ok {
			p.addRow(s)
			return
		}
	}
	p.other(line)
}

// other handles every line that is neither a separator, a header nor a row.
func (p *ptParser) other(line string) {
	if strings.HasPrefix(line, "local address:") || strings.HasPrefix(line, "remote address:") ||
		strings.HasPrefix(line, "GID:") || strings.HasPrefix(line, "MGID:") || strings.HasPrefix(line, "*") {
		if strings.Contains(line, "Waiting for client to connect") {
			p.waiting()
		}
		return
	}
	if strings.HasPrefix(line, "Correlation coefficient r^2") {
		if p.clockLine == "" {
			p.clockLine = strings.Clone(line)
		}
		p.warn(line)
		return
	}
	if p.sess.titles > 0 && p.table == nil && ptKnownLabel(line) {
		p.keyValues(line)
		return
	}
	if class, ok := ptError(line); ok {
		p.sawAny = true
		if p.sess.errClass == ClassNone {
			p.sess.errClass, p.sess.errLine = class, strings.Clone(line)
		}
		return
	}
	if title, ok := ptTitle(line); ok {
		p.title(strings.Clone(title))
		return
	}
	if ptWarning(line) {
		p.warn(line)
		return
	}
	switch {
	case line == "Local results:":
		p.sess.report = "local"
		return
	case line == "Remote results:":
		p.sess.report = "remote"
		return
	case strings.Trim(line, ".") == "" || line == "…":
		if p.table != nil {
			p.table.elided = true
		}
		return
	case line == "User stopped traffic" || line == "Client closed connection":
		// The normal end of --run_infinitely (Ctrl-C), without a closing line.
		p.separator()
		return
	case isHistogramLine(line):
		return // -H / -U per-sample latencies: "#, usec" then "N, value"
	}
	if p.table != nil {
		p.warn(line)
		return
	}
	if p.sess.titles > 0 {
		p.keyValues(line)
	}
}

// ptMaxWarnings bounds the foreign lines kept per table: a log that pours
// thousands of lines into a table must not make the result as large.
const ptMaxWarnings = 32

func (p *ptParser) warn(line string) {
	w := &p.warnings
	if p.table != nil {
		w = &p.table.warnings
	}
	switch n := len(*w); {
	case n < ptMaxWarnings:
		*w = append(*w, strings.Clone(line))
	case n == ptMaxWarnings:
		*w = append(*w, "(further lines not kept)")
	}
}

// isHistogramLine recognises "#, usec" and "12, 3.45" lines of -H / -U.
func isHistogramLine(line string) bool {
	if line == "#, usec" {
		return true
	}
	a, b, ok := strings.Cut(line, ", ")
	if !ok {
		return false
	}
	_, errA := parseCount(a)
	_, errB := finiteFloat(b)
	return errA && errB
}

// waiting starts a server session.
func (p *ptParser) waiting() {
	p.sawAny = true
	if len(p.sess.emitted) > 0 || p.sess.titles > 0 {
		p.newSession()
	}
	p.sess.server = true
}

func (p *ptParser) title(t string) {
	p.sawAny = true
	if len(p.sess.emitted) > 0 {
		p.newSession()
	}
	p.sess.title = t
	p.sess.titles++
}

func (p *ptParser) newSession() {
	for p.table != nil {
		p.closeTable(false)
	}
	p.endSession()
	p.sess = newPtSession()
}

// header opens a table; a second header before any row means a second
// process prints into the same capture, and opens its twin.
func (p *ptParser) header(l ptLayout) {
	if p.table != nil && p.table.rows() == 0 {
		if p.twin == nil {
			p.twin = &ptTable{layout: l, samples: make([]Sample, 0, 24)}
			p.sess.interleaved = true
		}
		return
	}
	for p.table != nil {
		p.closeTable(true)
	}
	p.table = &ptTable{layout: l, warnings: p.warnings, samples: make([]Sample, 0, 24)}
	p.warnings = nil
}

func (p *ptParser) separator() {
	if p.table == nil || (p.table.rows() == 0 && !p.table.elided) {
		return
	}
	p.closeTable(true)
}

// addRow files a row. With two interleaved processes each one's sizes
// grow, so a row goes to the table whose last size is the largest below
// its own (the first table on a tie). Who printed which row cannot be told
// when both print the same size at once.
func (p *ptParser) addRow(s Sample) {
	t := p.table
	if p.twin != nil && p.twin.lastBytes() < s.Bytes &&
		(t.lastBytes() >= s.Bytes || p.twin.lastBytes() > t.lastBytes()) {
		t = p.twin
	}
	if !hasFigure(s) && s.Iterations > 0 {
		// Only what crossed the wire is kept: the 0 printed for a figure
		// is not one (a failed run is never reported as zeros).
		t.unmeasured = append(t.unmeasured, Sample{Bytes: s.Bytes, Iterations: s.Iterations})
		t.last = s.Bytes
		return
	}
	t.samples = append(t.samples, s)
	t.last = s.Bytes
}

// lastBytes is the size of the last row, -1 before any.
func (t *ptTable) lastBytes() int64 {
	if t.rows() == 0 {
		return -1
	}
	return t.last
}

// hasFigure reports a row with at least one non-zero figure. perftest
// prints a row of zeros (bandwidth) or inf (latency) for iterations that
// ran only when it has no CPU clock rate to turn cycles into time; no real
// transfer measures 0. A row of 0 iterations (-D or --run_infinitely: no
// completion in the interval, e.g. a UD receiver that got nothing) is a
// true 0 and stays a measurement.
func hasFigure(s Sample) bool {
	for _, f := range [...]*float64{s.BWAvgBps, s.BWPeakBps, s.AggregateBps, s.NetworkUtil, s.MsgRatePPS,
		s.LatMinUS, s.LatMaxUS, s.LatTypicalUS, s.LatAvgUS, s.LatStdevUS, s.LatP99US, s.LatP999US} {
		if f != nil && *f != 0 {
			return true
		}
	}
	return false
}
