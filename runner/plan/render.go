package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/runner/tools"
	"gopkg.in/yaml.v3"
)

// WriteJSON writes the plan as indented JSON (the same document a run
// saves), with "->" left readable in job IDs.
func WriteJSON(w io.Writer, p *Plan) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// WriteYAML writes the plan as YAML with the JSON field names and
// order (it is the JSON document re-encoded, so the two never drift).
func WriteYAML(w io.Writer, p *Plan) error {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(buf.Bytes(), &doc); err != nil {
		return err
	}
	blockStyle(&doc)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return enc.Close()
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
// and the job's timeout, then the skipped tests.
func WriteTable(w io.Writer, p *Plan) error {
	fmt.Fprintf(w, "Plan for %s (backend %s): %d endpoints, %d rounds, %d jobs\n\n",
		p.Scenario, p.Backend, len(p.Endpoints), len(p.Rounds), countJobs(p))
	if err := endpointTable(w, p); err != nil {
		return err
	}
	if len(p.Rounds) > 0 {
		fmt.Fprintln(w)
		if err := commandTable(w, p); err != nil {
			return err
		}
	}
	if p.NeedsEtcd {
		where := map[string]string{"local": "embedded in rdmabench", "ssh": "started on the first host", "kube": "a pod of the run"}[p.Backend]
		if where == "" {
			where = "started by the backend"
		}
		fmt.Fprintf(w, "\nnixlbench jobs rendezvous through the run's etcd (${etcd}): %s, or the one run --etcd names.\n", where)
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintln(w)
		return skippedTable(w, p)
	}
	return nil
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

func commandTable(w io.Writer, p *Plan) error {
	t := newTable(w, "ROUND", "JOB", "LEG", "TIMEOUT", "ENDPOINT", "ROLE", "READY", "COMMAND")
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			for li, l := range j.Legs {
				for _, c := range l.Commands {
					leg := strconv.Itoa(li)
					if l.Variant != "" {
						leg += " " + l.Variant
					}
					t.Append(strconv.Itoa(r.Index), j.ID, leg, strconv.FormatFloat(j.TimeoutSec, 'f', -1, 64)+"s",
						c.Endpoint, role(c), ready(c), commandLine(c))
				}
			}
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if t.Cut {
		_, err := fmt.Fprintln(w, "(commands cut to fit the terminal; -o json or -o yaml has them whole)")
		return err
	}
	return nil
}

func skippedTable(w io.Writer, p *Plan) error {
	t := newTable(w, "SKIPPED TEST", "TOOL", "REASON")
	for _, s := range p.Skipped {
		t.Append(s.Test, s.Tool, s.Reason)
	}
	return t.Render()
}

func countJobs(p *Plan) int {
	n := 0
	for _, r := range p.Rounds {
		n += len(r.Jobs)
	}
	return n
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
