package export

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/units"
)

// JUnit XML, the format CI systems (GitLab, Jenkins, GitHub test reporters)
// read to show which test failed and why without opening the logs.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      float64     `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

// junitText keeps multi-line text readable in the XML.
type junitText struct {
	Text string `xml:",cdata"`
}

// WriteJUnit writes r as JUnit XML: one testsuite per test, one testcase
// per result; fail → <failure>, error → <error>, skipped → <skipped>, each
// with the reason and the figures.
func WriteJUnit(w io.Writer, r *schema.Report) error {
	suites := junitSuites{Name: "rdmabench " + r.Run.ID}
	byTest := map[string]*junitSuite{}
	var order []string
	for i := range r.Results {
		res := &r.Results[i]
		s := byTest[res.Test]
		if s == nil {
			s = &junitSuite{Name: res.Test, Timestamp: res.Started.UTC().Format("2006-01-02T15:04:05")}
			byTest[res.Test] = s
			order = append(order, res.Test)
		}
		s.add(resultCase(res))
	}
	for _, name := range order {
		suites.add(*byTest[name])
	}
	return writeXML(w, suites)
}

func (s *junitSuite) add(c junitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	s.Time += c.Time
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
}

func (ss *junitSuites) add(s junitSuite) {
	ss.Suites = append(ss.Suites, s)
	ss.Tests += s.Tests
	ss.Failures += s.Failures
	ss.Errors += s.Errors
	ss.Skipped += s.Skipped
	ss.Time += s.Time
}

func resultCase(r *schema.Result) junitCase {
	name := r.Pair()
	if name == "" {
		name = r.Test // nothing was paired: a test skipped before planning
	}
	if r.Backend != "" {
		name += " [" + r.Backend + "]"
	}
	if r.Op != "" {
		name += " " + r.Op
	}
	if r.Retest > 0 { // a low pair's rerun: not the same case as its matrix leg
		name += fmt.Sprintf(" (retest %d)", r.Retest)
	}
	c := junitCase{Name: name, Classname: "rdmabench." + r.Test + "." + r.Tool, Time: r.Seconds}
	figures := resultFigures(r)
	p := &junitProblem{Message: r.Reason, Type: string(r.ErrorClass), Text: figures}
	switch r.Verdict {
	case schema.VerdictInvalid:
		if p.Type == "" {
			p.Type = "invalid_path"
		}
		c.Failure = p
	case schema.VerdictFail:
		if p.Type == "" {
			p.Type = "shortfall"
		}
		c.Failure = p
	case schema.VerdictError:
		c.Error = p
	case schema.VerdictSkipped:
		c.Skipped = p
	default:
		c.SystemOut = &junitText{figures}
	}
	return c
}

// resultFigures is the plain-text evidence of a result for CI logs.
func resultFigures(r *schema.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tool: %s\nverdict: %s\n", r.Tool, r.Verdict)
	if r.BestBps > 0 {
		fmt.Fprintf(&b, "best: %s\n", r.Headline())
	}
	if r.LineRate != nil {
		fmt.Fprintf(&b, "line rate: %s (%s %s)\n", schema.FormatBandwidth(r.Family, r.LineRate.Bps), r.LineRate.Source, r.LineRate.Detail)
	}
	if r.Efficiency != nil {
		fmt.Fprintf(&b, "efficiency: %s of line rate\n", schema.FormatEfficiency(r.Efficiency))
	}
	if r.Expectation != "" {
		fmt.Fprintf(&b, "expectation: %s\n", r.Expectation)
	}
	if t := r.TransportLabel(); t != "" {
		fmt.Fprintf(&b, "transport: %s", t)
		if r.Transport != nil && r.Transport.Detail != "" {
			fmt.Fprintf(&b, " (%s)", r.Transport.Detail)
		}
		b.WriteString("\n")
	}
	if r.BestBps == 0 && len(r.Samples) > 0 {
		fmt.Fprintf(&b, "headline: %s\n", r.Headline())
	}
	for _, p := range r.RawOutputs {
		fmt.Fprintf(&b, "raw: %s\n", p)
	}
	return b.String()
}

// WriteCompareJUnit writes a comparison as JUnit XML: one testsuite per
// test, one testcase per compared (result, size); regression, broken and
// a measured result missing now → <failure>, other missing → <skipped>.
func WriteCompareJUnit(w io.Writer, c *compare.Comparison) error {
	suites := junitSuites{Name: "rdmabench compare " + c.Baseline.ID + " → " + c.Current.ID}
	byTest := map[string]*junitSuite{}
	for i := range c.Rows {
		row := &c.Rows[i]
		s := byTest[row.Test]
		if s == nil {
			s = &junitSuite{Name: "compare." + row.Test}
			byTest[row.Test] = s
		}
		s.add(compareCase(row, c.ThresholdPct))
	}
	names := make([]string, 0, len(byTest))
	for n := range byTest {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		suites.add(*byTest[n])
	}
	return writeXML(w, suites)
}

func compareCase(row *compare.Row, threshold float64) junitCase {
	name := row.Pair
	if row.Backend != "" {
		name += " [" + row.Backend + "]"
	}
	if row.Bytes > 0 {
		name += " @" + units.FormatSize(row.Bytes)
	}
	cells := compare.RowCells(row)
	text := fmt.Sprintf("metric: %s\nbaseline: %s\ncurrent: %s\nchange: %s\np: %s\nthreshold: %g%%\n%s",
		row.Metric, cells[5], cells[6], cells[7], cells[8], threshold, row.Note)
	c := junitCase{Name: name, Classname: "rdmabench.compare." + row.Test}
	msg := row.Status
	if row.ChangePct != nil {
		msg = fmt.Sprintf("%s: %+.1f%% against the baseline", row.Status, *row.ChangePct)
	} else if row.Note != "" {
		msg += ": " + row.Note
	}
	switch {
	case row.Fails():
		c.Failure = &junitProblem{Message: msg, Type: row.Status, Text: text}
	case row.Status == compare.StatusMissing:
		c.Skipped = &junitProblem{Message: msg, Text: text}
	default:
		c.SystemOut = &junitText{msg + "\n" + text}
	}
	return c
}

func writeXML(w io.Writer, v any) error {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.WriteString("\n")
	_, err := w.Write(bytes.Map(xmlChar, buf.Bytes()))
	return err
}

// xmlChar replaces what XML 1.0 forbids (control characters such as the
// ESC of a coloured tool log quoted in a reason) with U+FFFD: encoding/xml
// does so in attributes but writes CDATA as it is, and a CI server rejects
// the whole file over one such byte.
func xmlChar(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r',
		r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return r
	}
	return '\uFFFD'
}
