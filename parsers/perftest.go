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

func newPtSession() *ptSession { return &ptSession{info: map[string]string{}} }

// ptTable is a result table being read.
type ptTable struct {
	layout   ptLayout
	samples  []Sample
	warnings []string
	elided   bool
}

type ptParser struct {
	out      []Measurement
	sess     *ptSession
	table    *ptTable
	twin     *ptTable // second table when two processes print interleaved (run_perftest_loopback)
	warnings []string
	sawAny   bool // any perftest structure at all
	nonEmpty bool
	fields   [32]string
	slab     floatSlab
	keys     map[string]string   // header label → Info key, labels repeat run after run
	strs     map[string]string   // interned header values ("ON", "mlx5_0" …)
	layouts  map[string]ptLayout // table headers seen, by their text
}

func (p *ptParser) line(raw string) {
	line := strings.TrimSpace(stripLogPrefix(CleanLine(raw)))
	if line == "" {
		return
	}
	p.nonEmpty = true
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
	}
	if p.table != nil {
		p.table.warnings = append(p.table.warnings, strings.Clone(line))
		return
	}
	if p.sess.titles > 0 {
		p.keyValues(line)
	}
}

// keyValues records "Key : value" header facts; a line may hold two,
// separated by TABs (or the spaces a terminal rendered them as).
func (p *ptParser) keyValues(line string) {
	for _, half := range splitHeaderHalves(line) {
		i := strings.IndexByte(half, ':')
		if i <= 0 || i > 40 {
			continue
		}
		k, v := p.infoKey(half[:i]), strings.TrimSpace(half[i+1:])
		if k != "" && v != "" {
			p.sess.writableInfo()[k] = p.intern(v)
		}
	}
}

// ptHeaderLabels are the header-block labels perftest and its forks print
// (formats.md §1.5); lines starting with one skip the error checks.
var ptHeaderLabels = map[string]bool{
	"Dual-port": true, "Number of qps": true, "Connection type": true, "PCIe relax order": true,
	"ibv_wr* API": true, "TX depth": true, "RX depth": true, "CQ Moderation": true, "CQE Poll Batch": true,
	"Mtu": true, "Link type": true, "GID index": true, "Max inline data": true, "Outstand reads": true,
	"rdma_cm QPs": true, "Data ex. method": true, "Post List": true, "CPU freq": true, "NUMA node": true,
	"Use ROCm memory": true, "Use MUSA memory": true, "Using DDP": true,
}

// ptKnownLabel reports a line that starts with a known header label.
func ptKnownLabel(line string) bool {
	i := strings.IndexByte(line, ':')
	return i > 0 && ptHeaderLabels[strings.TrimRight(line[:i], " \t")]
}

// splitHeaderHalves splits " Dual-port : OFF\t\tDevice : mlx5_0" in two:
// at a TAB, or at a run of 3+ spaces that follows a value.
func splitHeaderHalves(line string) []string {
	if i := strings.IndexByte(line, '\t'); i >= 0 && strings.Contains(line[:i], ":") {
		return []string{line[:i], strings.TrimSpace(line[i:])}
	}
	c := strings.IndexByte(line, ':')
	if c < 0 {
		return nil
	}
	rest := line[c+1:]
	val := strings.TrimLeft(rest, " ")
	if j := strings.Index(val, "   "); j > 0 && strings.Contains(val[j:], ":") {
		cut := c + 1 + (len(rest) - len(val)) + j
		return []string{line[:cut], strings.TrimSpace(line[cut:])}
	}
	return []string{line}
}

// infoKey is infoKey with a cache.
func (p *ptParser) infoKey(label string) string {
	if k, ok := p.keys[label]; ok {
		return k
	}
	if p.keys == nil {
		p.keys = map[string]string{}
	}
	k := infoKey(label)
	p.keys[strings.Clone(label)] = k
	return k
}

// intern returns a kept copy of v, shared by every run that prints it.
func (p *ptParser) intern(v string) string {
	if c, ok := p.strs[v]; ok {
		return c
	}
	if p.strs == nil {
		p.strs = map[string]string{}
	}
	c := strings.Clone(v)
	if len(p.strs) < 4096 {
		p.strs[c] = c
	}
	return c
}

// layout parses a table header, once per distinct header text.
func (p *ptParser) layout(line string) (ptLayout, bool) {
	if l, ok := p.layouts[line]; ok {
		return l, true
	}
	l, ok := parsePtHeader(line)
	if ok && len(p.layouts) < 64 {
		if p.layouts == nil {
			p.layouts = map[string]ptLayout{}
		}
		p.layouts[strings.Clone(line)] = l
	}
	return l, ok
}

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

func (p *ptParser) warn(line string) {
	if p.table != nil {
		p.table.warnings = append(p.table.warnings, strings.Clone(line))
		return
	}
	p.warnings = append(p.warnings, strings.Clone(line))
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
	if p.table != nil && len(p.table.samples) == 0 {
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
	if p.table == nil || (len(p.table.samples) == 0 && !p.table.elided) {
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
	t.samples = append(t.samples, s)
}

// lastBytes is the size of the last row, -1 before any.
func (t *ptTable) lastBytes() int64 {
	if len(t.samples) == 0 {
		return -1
	}
	return t.samples[len(t.samples)-1].Bytes
}

// closeTable turns the open table into a measurement (its twin, if any,
// becomes the open table); terminated says the closing separator (or a
// following table) was seen.
func (p *ptParser) closeTable(terminated bool) {
	t := p.table
	p.table, p.twin = p.twin, nil
	if t == nil || (len(t.samples) == 0 && !t.elided) {
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
	headerOnly := p.table != nil && len(p.table.samples) == 0 && !p.table.elided
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

// ptVerbs are the verb names perftest puts in its banner, longest first.
var ptVerbs = []struct{ prefix, verb string }{
	{"RDMA_Write_imm", "write"},
	{"RDMA_Write", "write"},
	{"RDMA_Read", "read"},
	{"Send_imm", "send"},
	{"Send", "send"},
	{"Atomic", "atomic"},
}

// ptTitle recognises the banner, e.g. "RDMA_Write Bidirectional BW Test".
func ptTitle(line string) (string, bool) {
	if !strings.HasSuffix(line, " Test") || !(strings.Contains(line, " BW ") || strings.Contains(line, " Latency ")) {
		return "", false
	}
	for _, v := range ptVerbs {
		if strings.HasPrefix(line, v.prefix+" ") {
			return line, true
		}
	}
	return "", false
}

// ptToolFromTitle names the binary that prints a banner ("Send Latency
// Test" → ib_send_lat); "perftest" when the banner is missing.
func ptToolFromTitle(title string, l ptLayout) string {
	for _, v := range ptVerbs {
		if strings.HasPrefix(title, v.prefix+" ") {
			if strings.Contains(title, " Latency ") {
				return "ib_" + v.verb + "_lat"
			}
			return "ib_" + v.verb + "_bw"
		}
	}
	return "perftest"
}
