package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// WriteJSON writes the plan as indented JSON (the same document a run
// saves), with "->" left readable in job IDs. Rounds are written as they
// are built, one at a time: a plan of millions of legs streams.
func WriteJSON(w io.Writer, p *Plan) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	jw := &jsonFields{w: bw}
	bw.WriteString("{\n")
	jw.field("scenario", p.Scenario)
	jw.field("backend", p.Backend)
	jw.field("endpoints", p.Endpoints)
	jw.sep()
	bw.WriteString(`  "rounds": `)
	if p.NumRounds() == 0 {
		bw.WriteString("null")
	} else {
		bw.WriteString("[")
		first := true
		err := p.EachRound(func(r *Round) error {
			if !first {
				bw.WriteString(",")
			}
			first = false
			bw.WriteString("\n    ")
			return jw.value(r, "    ")
		})
		if err != nil {
			return err
		}
		bw.WriteString("\n  ]")
	}
	if len(p.Skipped) > 0 {
		jw.field("skipped", p.Skipped)
	}
	if p.NeedsEtcd {
		jw.field("needsEtcd", true)
	}
	if len(p.Samples) > 0 {
		jw.field("samples", p.Samples)
	}
	bw.WriteString("\n}\n")
	if jw.err != nil {
		return jw.err
	}
	return bw.Flush()
}

// jsonFields writes the members of WriteJSON's top-level object as
// encoding/json's indented form would, remembering the first error.
type jsonFields struct {
	w   *bufio.Writer
	n   int
	err error
	buf bytes.Buffer
}

func (j *jsonFields) sep() {
	if j.n > 0 {
		j.w.WriteString(",\n")
	}
	j.n++
}

func (j *jsonFields) field(name string, v any) {
	j.sep()
	j.w.WriteString(`  "` + name + `": `)
	if err := j.value(v, "  "); err != nil && j.err == nil {
		j.err = err
	}
}

// value writes v indented at prefix, HTML left unescaped.
func (j *jsonFields) value(v any, prefix string) error {
	j.buf.Reset()
	enc := json.NewEncoder(&j.buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := j.w.Write(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")))
	return err
}

// WriteYAML writes the plan as YAML with the JSON field names and
// order: each top-level field, and each round, is its JSON re-encoded, so
// the two never drift. Rounds stream as WriteJSON's do: one at a time.
func WriteYAML(w io.Writer, p *Plan) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	y := &yamlFields{w: bw}
	y.field("scenario", p.Scenario)
	y.field("backend", p.Backend)
	y.field("endpoints", p.Endpoints)
	if p.NumRounds() == 0 {
		y.field("rounds", nil)
	} else {
		bw.WriteString("rounds:\n")
		err := p.EachRound(func(r *Round) error {
			// A one-item list, indented as the field's items are.
			return y.write([]*Round{r}, "  ")
		})
		if err != nil {
			return err
		}
	}
	if len(p.Skipped) > 0 {
		y.field("skipped", p.Skipped)
	}
	if p.NeedsEtcd {
		y.field("needsEtcd", true)
	}
	if len(p.Samples) > 0 {
		y.field("samples", p.Samples)
	}
	if y.err != nil {
		return y.err
	}
	return bw.Flush()
}

// yamlFields writes WriteYAML's top-level fields, remembering the first
// error.
type yamlFields struct {
	w   *bufio.Writer
	err error
	js  bytes.Buffer
	out bytes.Buffer
}

func (y *yamlFields) field(name string, v any) {
	if err := y.write(map[string]any{name: json.RawMessage(y.marshal(v))}, ""); err != nil && y.err == nil {
		y.err = err
	}
}

// marshal is v's JSON, HTML left unescaped ("null" after an error).
func (y *yamlFields) marshal(v any) []byte {
	y.js.Reset()
	enc := json.NewEncoder(&y.js)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		if y.err == nil {
			y.err = err
		}
		return []byte("null")
	}
	return bytes.Clone(y.js.Bytes())
}

// write writes v as block-style YAML (through its JSON, for the JSON
// names and order), each line indented by indent.
func (y *yamlFields) write(v any, indent string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(y.marshal(v), &doc); err != nil {
		return err
	}
	blockStyle(&doc)
	y.out.Reset()
	enc := yaml.NewEncoder(&y.out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	for line := range bytes.Lines(y.out.Bytes()) {
		if indent != "" && len(line) > 1 {
			y.w.WriteString(indent)
		}
		y.w.Write(line)
	}
	return nil
}

// blockStyle turns the flow style of a JSON-decoded node tree into YAML's
// block style, keeping quotes only where YAML needs them.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// WriteTable writes the plan for people: the endpoints, then every
// command of every round in start order with its environment, readiness
// and the job's timeout, then the skipped tests. The commands stream: the
// rounds are built twice, once to size the columns and once to write them,
// so a plan of millions of legs never sits in memory.
func WriteTable(w io.Writer, p *Plan) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "Plan for %s (backend %s): %d endpoints, %d rounds, %d jobs\n\n",
		p.Scenario, p.Backend, len(p.Endpoints), p.NumRounds(), p.Totals().Jobs)
	if err := endpointTable(bw, p); err != nil {
		return err
	}
	if p.NumRounds() > 0 {
		fmt.Fprintln(bw)
		if err := commandTable(bw, p); err != nil {
			return err
		}
	}
	if p.NeedsEtcd {
		fmt.Fprintf(bw, "\n%s jobs rendezvous through the run's etcd (${etcd}): %s.\n", etcdTools(p), etcdWhere(p.Backend))
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintln(bw)
		if err := skippedTable(bw, p); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// etcdTools names the plan's tools that can meet in the run's etcd, in
// plan order: "nixlbench", "nixlbench and nccl_probe".
func etcdTools(p *Plan) string {
	var names []string
	for _, st := range p.Stats() {
		if spec, ok := tools.Lookup(st.Tool); ok && spec.MayUseEtcd() && !slices.Contains(names, st.Tool) {
			names = append(names, st.Tool)
		}
	}
	if len(names) == 0 {
		return "nixlbench"
	}
	return strings.Join(names, " and ")
}

// etcdWhere says where a backend's run finds the etcd nixlbench meets at.
func etcdWhere(backend string) string {
	where := map[string]string{"local": "embedded in rdmabench", "ssh": "started on the first host", "kube": "a pod of the run"}[backend]
	if where == "" {
		where = "started by the backend"
	}
	return where + ", or the one run --etcd names"
}

// newTable is a table fitted to the terminal: the command column, the
// widest, is elided there (-o json and -o yaml have every command whole).
func newTable(w io.Writer, header ...string) *term.Table {
	return term.NewTable(w, header...)
}

func endpointTable(w io.Writer, p *Plan) error {
	t := newTable(w, "ENDPOINT", "POOL", "HOST", "DEVICE", "ADDRESS", "GPUS")
	for _, ep := range p.Endpoints {
		dev := ep.Device
		if dev == "" {
			dev = "(auto)"
		}
		t.Append(ep.Name, ep.Pool, dashIfEmpty(ep.Host), dev, ep.Address, strconv.Itoa(ep.GPUs))
	}
	return t.Render()
}

var commandHeader = []string{"ROUND", "JOB", "LEG", "TIMEOUT", "ENDPOINT", "ROLE", "READY", "COMMAND"}

func commandTable(w io.Writer, p *Plan) error {
	widths := make([]int, len(commandHeader))
	measure := func(row []string) error {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
		return nil
	}
	if err := measure(commandHeader); err != nil {
		return err
	}
	if err := commandRows(p, measure); err != nil {
		return err
	}
	b := box{w: w, widths: widths}
	b.rule("┌", "┬", "┐")
	b.row(commandHeader)
	b.rule("├", "┼", "┤")
	if err := commandRows(p, func(row []string) error { b.row(row); return b.err }); err != nil {
		return err
	}
	b.rule("└", "┴", "┘")
	return b.err
}

// commandRows calls fn with one row per command of every leg, in plan
// order; the row is reused between calls.
func commandRows(p *Plan, fn func([]string) error) error {
	row := make([]string, len(commandHeader))
	return p.EachRound(func(r *Round) error {
		idx := strconv.Itoa(r.Index)
		for _, j := range r.Jobs {
			timeout := strconv.FormatFloat(j.TimeoutSec, 'f', -1, 64) + "s"
			for li, l := range j.Legs {
				leg := strconv.Itoa(li)
				if l.Variant != "" {
					leg += " " + l.Variant
				}
				for _, c := range l.Commands {
					row[0], row[1], row[2], row[3] = idx, j.ID, leg, timeout
					row[4], row[5], row[6], row[7] = c.Endpoint, role(c), ready(c), commandLine(c)
					if err := fn(row); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

// box writes a table in the same box-drawing form as the other tables,
// with the column widths known in advance, so rows go out as they come.
type box struct {
	w      io.Writer
	widths []int
	err    error
	line   []byte
}

func (b *box) rule(left, mid, right string) {
	b.line = append(b.line[:0], left...)
	for i, w := range b.widths {
		if i > 0 {
			b.line = append(b.line, mid...)
		}
		for k := 0; k < w+2; k++ {
			b.line = append(b.line, "─"...)
		}
	}
	b.line = append(b.line, right...)
	b.flush()
}

func (b *box) row(cells []string) {
	b.line = append(b.line[:0], "│"...)
	for i, c := range cells {
		b.line = append(b.line, ' ')
		b.line = append(b.line, c...)
		for k := utf8.RuneCountInString(c); k < b.widths[i]+1; k++ {
			b.line = append(b.line, ' ')
		}
		b.line = append(b.line, "│"...)
	}
	b.flush()
}

func (b *box) flush() {
	if b.err != nil {
		return
	}
	b.line = append(b.line, '\n')
	_, b.err = b.w.Write(b.line)
}

func skippedTable(w io.Writer, p *Plan) error {
	t := newTable(w, "SKIPPED TEST", "TOOL", "REASON")
	for _, s := range p.Skipped {
		t.Append(s.Test, s.Tool, s.Reason)
	}
	return t.Render()
}

func role(c PlannedCommand) string {
	if c.Parse {
		return c.Role + " *"
	}
	return c.Role
}

func ready(c PlannedCommand) string {
	switch c.Ready {
	case tools.ReadyListen:
		return "listen :" + strconv.Itoa(c.Port)
	case "":
		return "-"
	}
	return c.Ready
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// commandLine renders a planned command as one shell-like line: its
// environment (sorted) then its argv, quoted where a shell would need it.
// Placeholders (${addr:NAME}, ${etcd} …) are shown as they are.
func commandLine(c PlannedCommand) string {
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys)+len(c.Argv))
	for _, k := range keys {
		parts = append(parts, k+"="+shellQuote(c.Env[k]))
	}
	for _, a := range c.Argv {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !safeShellRune(r) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

func safeShellRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-_./:=,@%+^${}", r)
}
