package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// scenarioKeysDoc is the scenario keys reference, generated from JSONSchema.
const scenarioKeysDoc = "../docs/reference/scenario-keys.md"

// TestScenarioKeysDocIsTheSchema: docs/reference/scenario-keys.md is the
// JSON Schema `rdmabench schema` prints (keys, types, values, what is
// required, fieldDocs' words) as tables, so that the reference cannot
// drift from what the loader reads. `go test ./scenarios -run
// TestScenarioKeysDocIsTheSchema -update` rewrites it.
func TestScenarioKeysDocIsTheSchema(t *testing.T) {
	got := renderScenarioKeys(t)
	if *update {
		if err := os.WriteFile(scenarioKeysDoc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(scenarioKeysDoc)
	if err != nil {
		t.Fatalf("%v (go test ./scenarios -run TestScenarioKeysDocIsTheSchema -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("docs/reference/scenario-keys.md is not the scenario schema: run go test ./scenarios -run TestScenarioKeysDocIsTheSchema -update")
	}
}

// schemaNode is the part of a JSON Schema the reference reads.
type schemaNode struct {
	Type                 any                    `json:"type"`
	Const                any                    `json:"const"`
	Enum                 []any                  `json:"enum"`
	Description          string                 `json:"description"`
	Pattern              string                 `json:"pattern"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
}

// unitNames names the unit-bearing values by their pattern.
func unitNames() map[string]string {
	out := map[string]string{}
	for t, s := range scalarSchemas {
		out[s["pattern"].(string)] = strings.ToLower(reflect.Type.Name(t))
	}
	return out
}

func renderScenarioKeys(t *testing.T) string {
	t.Helper()
	var root schemaNode
	if err := json.Unmarshal(JSONSchema(), &root); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("# Scenario keys\n\n")
	b.WriteString("<!-- Generated from the scenario JSON Schema by `go test ./scenarios -run TestScenarioKeysDocIsTheSchema -update`: do not edit by hand. -->\n\n")
	b.WriteString("Every key of a scenario file (`" + APIVersion + "`, kind `" + Kind + "`), from the JSON Schema\n")
	b.WriteString("`rdmabench schema` prints, which is generated from the loader's own types and value lists. Keys are\n")
	b.WriteString("listed alphabetically; unknown keys are errors. Sizes, rates, percents and durations are written\n")
	b.WriteString("as [units](../user-guide/scenarios.md#units). The loader checks more than a schema can say (which\n")
	b.WriteString("arguments a tool reads, what a backend allows): [scenarios](../user-guide/scenarios.md) explains it.\n")
	units := unitNames()
	var sections []string
	var walk func(path string, n *schemaNode)
	walk = func(path string, n *schemaNode) {
		var s strings.Builder
		title := path
		if title == "" {
			title = "Top level"
		}
		fmt.Fprintf(&s, "\n## %s\n\n| key | type | required | meaning and values |\n|---|---|---|---|\n", title)
		req := map[string]bool{}
		for _, r := range n.Required {
			req[r] = true
		}
		keys := make([]string, 0, len(n.Properties))
		for k := range n.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var nested []string
		for _, k := range keys {
			p := n.Properties[k]
			required := ""
			if req[k] {
				required = "yes"
			}
			fmt.Fprintf(&s, "| `%s` | %s | %s | %s |\n", k, typeOf(p, units), required, meaningOf(p))
			if p.Properties != nil || (p.Items != nil && p.Items.Properties != nil) {
				nested = append(nested, k)
			}
		}
		sections = append(sections, s.String())
		for _, k := range nested {
			p, sub := n.Properties[k], joinKey(path, k)
			if p.Items != nil {
				walk(sub+"[]", p.Items)
			} else {
				walk(sub, p)
			}
		}
	}
	walk("", &root)
	for _, s := range sections {
		b.WriteString(s)
	}
	return b.String()
}

func joinKey(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// typeOf says a value's type in words: the unit for unit-bearing values,
// "list of …" and "map of …" for the containers.
func typeOf(n *schemaNode, units map[string]string) string {
	if u, ok := units[n.Pattern]; ok {
		return u
	}
	if n.Const != nil {
		return "string"
	}
	types := typeNames(n.Type)
	switch {
	case slicesHas(types, "array") && n.Items != nil:
		if n.Items.Properties != nil {
			return "list of objects"
		}
		item := typeOf(n.Items, units)
		if !strings.Contains(item, " ") {
			item += "s" // list of strings, of sizes
		}
		return "list of " + item
	case slicesHas(types, "object") && n.Properties != nil:
		return "object"
	case slicesHas(types, "object"):
		var add schemaNode
		if len(n.AdditionalProperties) > 0 && json.Unmarshal(n.AdditionalProperties, &add) == nil && add.Type != nil {
			return "map of name to " + strings.Join(typeNames(add.Type), ", ")
		}
		return "object"
	}
	return strings.Join(types, " or ")
}

func typeNames(t any) []string {
	switch v := t.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, s := range v {
			out = append(out, fmt.Sprint(s))
		}
		return out
	}
	return nil
}

func slicesHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// meaningOf is the key's description and its closed set of values.
func meaningOf(n *schemaNode) string {
	parts := []string{}
	if n.Description != "" {
		parts = append(parts, n.Description)
	}
	if n.Const != nil {
		parts = append(parts, fmt.Sprintf("exactly `%v`", n.Const))
	}
	enum := n.Enum
	if enum == nil && n.Items != nil {
		enum = n.Items.Enum
	}
	if len(enum) > 0 {
		vals := make([]string, len(enum))
		for i, v := range enum {
			vals[i] = fmt.Sprintf("`%v`", v)
		}
		parts = append(parts, "one of "+strings.Join(vals, ", "))
	}
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", `\<`, ">", `\>`).Replace(strings.Join(parts, "; "))
}
