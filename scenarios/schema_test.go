package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/units"
	"gopkg.in/yaml.v3"
)

// The schema is valid JSON of draft 2020-12 with the enums validation uses.
func TestJSONSchemaShape(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(JSONSchema(), &s); err != nil {
		t.Fatal(err)
	}
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || s["additionalProperties"] != false {
		t.Errorf("schema header: %v %v", s["$schema"], s["additionalProperties"])
	}
	props := s["properties"].(map[string]any)
	tool := props["tests"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["tool"].(map[string]any)
	for _, want := range append(Tools, "all_reduce_perf") {
		if !slices.Contains(tool["enum"].([]any), any(want)) {
			t.Errorf("tool enum lacks %q: %v", want, tool["enum"])
		}
	}
	if got := fmt.Sprint(props["backend"].(map[string]any)["enum"]); got != "[local ssh kube]" {
		t.Errorf("backend enum %s", got)
	}
	pattern := props["tests"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["pattern"].(map[string]any)
	if len(pattern["enum"].([]any)) != len(Patterns) {
		t.Errorf("pattern enum %v", pattern["enum"])
	}
	req := fmt.Sprint(s["required"])
	if req != "[apiVersion kind metadata pools tests]" {
		t.Errorf("required %s", req)
	}
}

// Every shipped scenario satisfies the schema, and typical mistakes do not:
// the schema and the loader agree.
func TestJSONSchemaAgreesWithLoader(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(JSONSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.yaml")
	for _, f := range files {
		if errs := schemaCheck(schema, yamlDoc(t, f), ""); len(errs) > 0 {
			t.Errorf("%s fails the schema: %v", f, errs)
		}
	}
	for name, want := range map[string]string{
		"unknown-key-nested": "tests[0].arg: not allowed",
		"unknown-tool":       "tests[0].tool: not one of",
		"unknown-pattern":    "tests[0].pattern: not one of",
		"wrong-type-int":     "pools[0].replicas: want integer",
		"wrong-type-list":    "tests[0].args.sizes: want array",
		"bad-size":           `tests[0].args.sizes[1]: "8XB" does not match`,
		"unknown-backend":    "backend: not one of",
		"wrong-kind":         "kind: not Scenario",
	} {
		errs := schemaCheck(schema, yamlDoc(t, "testdata/broken/"+name+".yaml"), "")
		if !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("%s: schema errors %q, want one containing %q", name, errs, want)
		}
	}
}

func yamlDoc(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// schemaCheck is a small validator for the keywords the generated schema
// uses (type, properties, additionalProperties, required, items, enum,
// const, pattern, minimum, maximum).
func schemaCheck(s map[string]any, v any, path string) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if c, ok := s["const"]; ok && c != v {
		bad("not %v", c)
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return fmt.Sprint(x) == fmt.Sprint(v) }) {
		bad("not one of %v", e)
	}
	if ty, ok := s["type"]; ok && !typeMatches(ty, v) {
		bad("want %v, got %T", ty, v)
		return errs
	}
	switch x := v.(type) {
	case map[string]any:
		errs = append(errs, checkObject(s, x, path)...)
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				errs = append(errs, schemaCheck(items, it, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case string:
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			bad("%q does not match %s", x, p)
		}
	case int, float64:
		f := toFloat(x)
		if m, ok := s["minimum"].(float64); ok && f < m {
			bad("%v below minimum %v", f, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			bad("%v above maximum %v", f, m)
		}
	}
	return errs
}

func checkObject(s map[string]any, x map[string]any, path string) []string {
	var errs []string
	props, _ := s["properties"].(map[string]any)
	for _, r := range asList(s["required"]) {
		if _, ok := x[r.(string)]; !ok {
			errs = append(errs, joinPath(path, r.(string))+": required")
		}
	}
	for k, val := range x {
		p := joinPath(path, k)
		switch sub := props[k].(type) {
		case map[string]any:
			errs = append(errs, schemaCheck(sub, val, p)...)
		default:
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				errs = append(errs, schemaCheck(ap, val, p)...)
			} else if s["additionalProperties"] == false {
				errs = append(errs, p+": not allowed")
			}
		}
	}
	return errs
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case float64:
		return n
	}
	return math.NaN()
}

func typeMatches(ty any, v any) bool {
	for _, t := range append(asList(ty), ty) {
		switch t {
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "integer":
			if _, ok := v.(int); ok {
				return true
			}
		case "number":
			if _, ok := v.(int); ok {
				return true
			}
			if _, ok := v.(float64); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		}
	}
	return false
}

// An editor and the loader agree on which rates are valid: the schema's
// pattern accepts exactly what units.ParseRate reads (and auto).
func TestJSONSchemaRatePatternAgreesWithParseRate(t *testing.T) {
	pattern, _ := scalarSchemas[reflect.TypeFor[Rate]()]["pattern"].(string)
	re := regexp.MustCompile(pattern)
	for _, in := range []string{
		"400Gb/s", "200Gbps", "100Gbit/s", "100Gbits/s", "400 Gb/sec", "100Gbit/sec", "25GB/s", "12.5GBps",
		"50GB/sec", "1GiB/s", "1GiB/sec", "8Kib/s", "10kb/s", "1Tb/s", "10 Mb/s", "400b/s",
		"400G", "400Gb", "400gb/s", "400Gibps", "400kib/s", "400 Gb/sec (4X NDR)", "fast", "400",
	} {
		_, err := units.ParseRate(in)
		if re.MatchString(in) != (err == nil) {
			t.Errorf("%q: schema pattern matches %v, ParseRate error %v", in, re.MatchString(in), err)
		}
	}
	if !re.MatchString("auto") {
		t.Errorf("schema pattern refuses auto")
	}
}

// Every field of the cluster section and of a toleration (and the pool's
// kube fields) has an editor hover text.
func TestJSONSchemaDescribesKubeFields(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(JSONSchema(), &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	cluster := props["cluster"].(map[string]any)["properties"].(map[string]any)
	pool := props["pools"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	toleration := cluster["tolerations"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	for section, fields := range map[string]map[string]any{"cluster": cluster, "toleration": toleration} {
		for name, f := range fields {
			if d, _ := f.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s has no description in schema_docs.go", section, name)
			}
		}
	}
	for _, name := range []string{"tolerations", "networks", "resources", "nodeSelector", "avoidPools"} {
		if d, _ := pool[name].(map[string]any)["description"].(string); d == "" {
			t.Errorf("pools[].%s has no description in schema_docs.go", name)
		}
	}
	for name, want := range map[string]string{"imagePullPolicy": "[Always IfNotPresent Never]"} {
		if got := fmt.Sprint(cluster[name].(map[string]any)["enum"]); got != want {
			t.Errorf("cluster.%s enum %s, want %s", name, got, want)
		}
	}
	for name, want := range map[string]string{"operator": "[Equal Exists]", "effect": "[NoSchedule PreferNoSchedule NoExecute]"} {
		if got := fmt.Sprint(toleration[name].(map[string]any)["enum"]); got != want {
			t.Errorf("toleration.%s enum %s, want %s", name, got, want)
		}
	}
}
