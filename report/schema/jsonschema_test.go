package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// validate checks v against the subset of JSON Schema that JSONSchema
// emits: $ref into $defs, type, properties, required, additionalProperties,
// items and enum. It returns every violation with its JSON path.
func validate(defs map[string]any, schema map[string]any, v any, path string) []string {
	if ref, ok := schema["$ref"].(string); ok {
		return validate(defs, defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any), v, path)
	}
	var errs []string
	if !typeMatches(schema["type"], v) {
		return []string{fmt.Sprintf("%s: %T does not match type %v", path, v, schema["type"])}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		errs = append(errs, fmt.Sprintf("%s: %v not in %v", path, v, enum))
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		for _, r := range asStrings(schema["required"]) {
			if _, ok := x[r]; !ok {
				errs = append(errs, fmt.Sprintf("%s: missing required %q", path, r))
			}
		}
		for k, val := range x {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, validate(defs, ps, val, path+"."+k)...)
			} else if ap, ok := schema["additionalProperties"].(map[string]any); ok {
				errs = append(errs, validate(defs, ap, val, path+"."+k)...)
			} else if schema["additionalProperties"] == false {
				errs = append(errs, fmt.Sprintf("%s: unknown field %q", path, k))
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, el := range x {
				errs = append(errs, validate(defs, items, el, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

func typeMatches(t any, v any) bool {
	if t == nil {
		return true
	}
	for _, name := range asStrings(t) {
		switch x := v.(type) {
		case nil:
			if name == "null" {
				return true
			}
		case string:
			if name == "string" {
				return true
			}
		case bool:
			if name == "boolean" {
				return true
			}
		case float64:
			if name == "number" || name == "integer" && x == float64(int64(x)) {
				return true
			}
		case map[string]any:
			if name == "object" {
				return true
			}
		case []any:
			if name == "array" {
				return true
			}
		}
	}
	return false
}

func asStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, e.(string))
		}
		return out
	}
	return nil
}

func loadSchema(t *testing.T) (map[string]any, map[string]any) {
	t.Helper()
	data, err := schema.JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, doc["$defs"].(map[string]any)
}

func TestJSONSchemaGolden(t *testing.T) {
	data, err := schema.JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "report.schema.json", append(data, '\n'))
}

// Every report under testdata/report validates against the schema.
func TestJSONSchemaAcceptsReports(t *testing.T) {
	doc, defs := loadSchema(t)
	files, _ := filepath.Glob(filepath.Join(fixture.TestdataDir, "*.json"))
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".schema.json") || strings.HasPrefix(filepath.Base(f), "compare") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`"schemaVersion": "`+schema.VersionV1+`"`)) {
			// A report of an older schema (a real run kept as it was
			// written) is what Load makes of it that the schema describes.
			r, err := schema.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if data, err = json.Marshal(r); err != nil {
				t.Fatal(err)
			}
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		if errs := validate(defs, doc, v, "$"); len(errs) > 0 {
			t.Errorf("%s: %d violations, first: %v", f, len(errs), errs[:min(5, len(errs))])
		}
		n++
	}
	if n < 1 {
		t.Fatalf("validated %d reports, want the fixtures (run -update)", n)
	}
}

// The schema rejects what a reader must not accept.
func TestJSONSchemaRejects(t *testing.T) {
	doc, defs := loadSchema(t)
	cases := map[string]string{
		"bad verdict":    `{"schemaVersion":"x","run":{"id":"a","scenario":"s","scenarioFile":"f","scenarioHash":"h","start":"2026-01-01T00:00:00Z","rdmabenchVersion":"v","backend":"local"},"endpoints":[],"summary":{"total":1,"pass":0,"fail":0,"error":0,"skipped":0},"results":[{"jobId":"j","leg":0,"test":"t","tool":"x","round":0,"samples":[],"verdict":"great","started":"2026-01-01T00:00:00Z","seconds":1}]}`,
		"unknown field":  `{"schemaVersion":"x","bogus":1}`,
		"missing run":    `{"schemaVersion":"x","endpoints":[],"results":[],"summary":{"total":0,"pass":0,"fail":0,"error":0,"skipped":0}}`,
		"string as rate": `{"schemaVersion":"x","run":{"id":"a","scenario":"s","scenarioFile":"f","scenarioHash":"h","start":"2026-01-01T00:00:00Z","rdmabenchVersion":"v","backend":"local","lineRate":{"bps":"400G","source":"nic"}},"endpoints":[],"results":[],"summary":{"total":0,"pass":0,"fail":0,"error":0,"skipped":0}}`,
	}
	for name, text := range cases {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(name, err)
		}
		if errs := validate(defs, doc, v, "$"); len(errs) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}
