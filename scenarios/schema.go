package scenarios

import (
	"encoding/json"
	"reflect"
	"strings"
)

// JSON Schema of the scenario document, generated from the Go types by
// reflection over their yaml and schema tags, so that editors (the YAML
// language server: `# yaml-language-server: $schema=…`) complete keys and
// flag typos with the same rules the loader applies, without a second,
// hand-written description that would drift.
//
// Tags read: yaml (key, omitempty: optional), schema ("required" for an
// optional-looking key validation requires; "enum=NAME" for one of the lists
// in schemaEnums).

// SchemaID is the $id of the generated schema.
const SchemaID = "https://rdmabench.io/schemas/scenario-v1alpha1.json"

// schemaEnums are the value lists tags refer to: the same slices validation
// checks against.
var schemaEnums = map[string]func() []any{
	"backends":            func() []any { return anySlice(Backends) },
	"pullPolicies":        func() []any { return anySlice(PullPolicies) },
	"platforms":           func() []any { return anySlice(Platforms) },
	"tolerationOperators": func() []any { return anySlice(TolerationOperators) },
	"taintEffects":        func() []any { return anySlice(TaintEffects) },
	"tools":               func() []any { return anySlice(append(append([]string{}, Tools...), ncclBinaries()...)) },
	"patterns":            func() []any { return anySlice(Patterns) },
	"requirements":        func() []any { return anySlice(Requirements) },
	"affinityRelations":   func() []any { return anySlice(AffinityRelations) },
	"connections":         func() []any { return anySlice(Connections) },
	"mtus":                func() []any { return anySlice(MTUs) },
	"nixlBackends":        func() []any { return anySlice(NixlBackends) },
	"nixlRuntimes":        func() []any { return anySlice(NixlRuntimes) },
	"nixlOps":             func() []any { return anySlice(NixlOps) },
	"segments":            func() []any { return anySlice(NixlSegments) },
	"collectives":         func() []any { return anySlice(Collectives) },
	"dataTypes":           func() []any { return anySlice(NCCLDataTypes) },
	"ucxTests":            func() []any { return anySlice(UCXTests) },
	"lowPairReferences":   func() []any { return anySlice(LowPairReferences) },
	"models":              func() []any { return anySlice(ModelPresetNames()) },
	"kvDtypes":            func() []any { return anySlice(KVDtypes) },
	"deepepModes":         func() []any { return anySlice(DeepEPModes) },
	"deepepDtypes":        func() []any { return anySlice(DeepEPDtypes) },
}

// ncclBinaries are the nccl-tests binary names accepted as tool names.
func ncclBinaries() []string {
	out := make([]string, len(Collectives))
	for i, c := range Collectives {
		out[i] = c + "_perf"
	}
	return out
}

func anySlice[T any](list []T) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out
}

// JSONSchema returns the scenario's JSON Schema (draft 2020-12), indented.
func JSONSchema() []byte {
	s := schemaFor(reflect.TypeFor[Scenario]())
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = SchemaID
	s["title"] = "rdmabench scenario (" + APIVersion + ")"
	props := s["properties"].(map[string]any)
	props["apiVersion"] = map[string]any{"const": APIVersion}
	props["kind"] = map[string]any{"const": Kind}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic("scenarios: schema does not marshal: " + err.Error())
	}
	return append(out, '\n')
}

// scalarSchemas describe the unit-bearing values (written as text, or a
// plain number where that means bytes, seconds or percent).
var scalarSchemas = map[reflect.Type]map[string]any{
	reflect.TypeFor[Size](): {
		"type": []string{"string", "integer"}, "minimum": 1,
		"pattern":     `^[0-9]+(\.[0-9]+)?\s*([KMGT]i?B|[KkMmGgTt]|B)?$`,
		"description": "a size: 4KiB, 8MiB, 1GiB (binary), 4KB (decimal), 64K (as the tools read it) or plain bytes",
	},
	reflect.TypeFor[GPUCount](): {
		"type": []string{"integer", "string"}, "minimum": 0, "pattern": `^(all|[0-9]+)$`,
		"description": "a count of GPUs, or all (every GPU of the host, counted when the run is planned)",
	},
	reflect.TypeFor[Rate](): {
		"type":        "string",
		"pattern":     `^(auto|[0-9]+(\.[0-9]+)?\s*([kKMGT]?(b/s|bps|bit/s|bits/s|b/sec|bit/sec|bits/sec|B/s|Bps|B/sec)|[KMGT]i(b/s|B/s|b/sec|B/sec)))$`,
		"description": "a rate: 400Gb/s, 200Gbps, 400 Gb/sec, 25GB/s (bytes), or auto (lineRate only)",
	},
	reflect.TypeFor[Percent](): {
		"type": []string{"string", "number"}, "minimum": 0, "maximum": 100,
		"pattern":     `^\s*[0-9]+(\.[0-9]+)?\s*%?\s*$`,
		"description": "a percent from 0 to 100, like 90%",
	},
	reflect.TypeFor[Duration](): {
		"type": []string{"string", "number"}, "exclusiveMinimum": 0,
		"pattern":     `^\s*(([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+|[0-9]+(\.[0-9]+)?)\s*$`,
		"description": "a duration: 10s, 2m, 500us, or plain seconds",
	},
}

// schemaFor describes one Go type.
func schemaFor(t reflect.Type) map[string]any {
	if s, ok := scalarSchemas[t]; ok {
		return copyMap(s)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaFor(t.Elem())
	case reflect.Struct:
		return structSchema(t)
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return map[string]any{"type": "object"} // a document of its own (podPatch: a Pod patch)
		}
		return map[string]any{"type": "object", "additionalProperties": map[string]any{"type": []string{"string", "number", "boolean"}}}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Int:
		return map[string]any{"type": "integer"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	}
	panic("scenarios: no schema for " + t.String())
}

func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		p := schemaFor(f.Type)
		opts := f.Tag.Get("schema")
		if enum, ok := strings.CutPrefix(opts, "enum="); ok {
			target := p
			if p["type"] == "array" {
				target = p["items"].(map[string]any)
			}
			target["enum"] = schemaEnums[enum]()
		}
		if d := fieldDocs[t.Name()+"."+name]; d != "" {
			p["description"] = d
		}
		props[name] = p
		if !strings.Contains(f.Tag.Get("yaml"), "omitempty") || opts == "required" {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
