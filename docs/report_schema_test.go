package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// TestReportSchemaDocNamesEveryField: docs/reference/report-schema.md has a
// section per type of report.json's JSON Schema, and each section's table
// lists exactly that type's fields, with their type and whether they are
// always present, and names each value of a closed set: a field added to
// the report types fails here until it is documented.
func TestReportSchemaDocNamesEveryField(t *testing.T) {
	raw, err := schema.JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties map[string]schemaProp `json:"properties"`
			Required   []string              `json:"required"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	doc := readDocSections(t, "reference/report-schema.md")
	for _, name := range sortedKeys(schema.Defs) {
		def := schema.Defs[name]
		rows, ok := doc[name]
		if !ok {
			t.Errorf("report-schema.md: no section ## %s (a type of report.json)", name)
			continue
		}
		required := map[string]bool{}
		for _, r := range def.Required {
			required[r] = true
		}
		for _, field := range sortedKeys(def.Properties) {
			p := def.Properties[field]
			row, ok := rows[field]
			if !ok {
				t.Errorf("report-schema.md ## %s: field %q is not documented", name, field)
				continue
			}
			want := p.typeWord()
			if required[field] {
				want += ", always"
			}
			if row.typ != want {
				t.Errorf("report-schema.md ## %s, %s: type %q, want %q", name, field, row.typ, want)
			}
			for _, v := range p.Enum {
				if !strings.Contains(row.meaning, "`"+v+"`") {
					t.Errorf("report-schema.md ## %s, %s: the value `%s` is not named", name, field, v)
				}
			}
		}
		for _, field := range sortedKeys(rows) {
			if _, ok := def.Properties[field]; !ok {
				t.Errorf("report-schema.md ## %s: %q is not a field of report.json", name, field)
			}
		}
	}
	for _, name := range sortedKeys(doc) {
		if _, ok := schema.Defs[name]; !ok {
			t.Errorf("report-schema.md: section ## %s names no type of report.json", name)
		}
	}
}

// schemaProp is one property of the report's JSON Schema.
type schemaProp struct {
	Ref                  string      `json:"$ref"`
	Type                 any         `json:"type"`
	Format               string      `json:"format"`
	Items                *schemaProp `json:"items"`
	AdditionalProperties *schemaProp `json:"additionalProperties"`
	Enum                 []string    `json:"enum"`
}

// typeWord is how the doc writes a field's type: a type links to its
// section, containers say what they hold.
func (p *schemaProp) typeWord() string {
	if p.Ref != "" {
		name := p.Ref[strings.LastIndex(p.Ref, "/")+1:]
		return fmt.Sprintf("[%s](#%s)", name, strings.ToLower(name))
	}
	var typ string
	switch v := p.Type.(type) {
	case string:
		typ = v
	case []any:
		for _, x := range v {
			if s, _ := x.(string); s != "null" {
				typ = s
				break
			}
		}
	}
	switch {
	case typ == "array" && p.Items != nil:
		return "list of " + p.Items.typeWord()
	case typ == "object" && p.AdditionalProperties != nil:
		return "map of " + p.AdditionalProperties.typeWord()
	case typ == "string" && p.Format == "date-time":
		return "time"
	}
	return typ
}

type docRow struct{ typ, meaning string }

var rowRE = regexp.MustCompile("^\\| `([^`]+)` \\| (.*?) \\| (.*) \\|$")

// readDocSections reads a doc's "## Name" sections and, in each, the rows
// of its field table by field name.
func readDocSections(t *testing.T, path string) map[string]map[string]docRow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]docRow{}
	var cur map[string]docRow
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = map[string]docRow{}
			out[strings.TrimSpace(h)] = cur
			continue
		}
		if m := rowRE.FindStringSubmatch(line); m != nil && cur != nil {
			if _, dup := cur[m[1]]; dup {
				t.Errorf("%s: field %q twice in one section", path, m[1])
			}
			cur[m[1]] = docRow{typ: m[2], meaning: m[3]}
		}
	}
	return out
}

// sortedKeys lists a map's keys in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
