package scenarios

import (
	"reflect"

	"github.com/rdmabench/rdmabench/tool"
)

// The bridge between a test's Args and its tool's argument schema (package
// tool): the schema names keys, Args holds them as fields of those YAML
// names. Only keys of the schema are looked up, never a key a user wrote.

var argFieldIndex = yamlFields(reflect.TypeFor[Args]())

// argField is the field of a that holds key; invalid for an unknown key.
func argField(a *Args, key string) reflect.Value {
	i, ok := argFieldIndex[key]
	if !ok {
		return reflect.Value{}
	}
	return reflect.ValueOf(a).Elem().Field(i)
}

// argSet says whether the key holds a value (written, or defaulted).
func argSet(a *Args, key string) bool {
	f := argField(a, key)
	return f.IsValid() && !f.IsZero()
}

// argValue is a key's value as a tool's rules read it: plain Go (string,
// int, bool, []string, tool.Size, []tool.Size; a duration's text), nil
// when unset or unknown.
func argValue(a *Args, key string) any {
	f := argField(a, key)
	if !f.IsValid() {
		return nil
	}
	switch x := f.Interface().(type) {
	case Size:
		return toolSize(x)
	case []Size:
		out := make([]tool.Size, len(x))
		for i := range x {
			out[i] = toolSize(x[i])
		}
		return out
	case Duration:
		return x.Raw
	case *int:
		if x == nil {
			return nil
		}
		return *x
	default:
		return x
	}
}

// toolSize is a size as a rule reads it; OK when its form passed (the
// loader reports it otherwise).
func toolSize(s Size) tool.Size {
	ok := s.Parse() == nil && s.Bytes > 0
	return tool.Size{Bytes: s.Bytes, Raw: s.Raw, OK: ok}
}

// argValues are a test's args as its tool's defaults and rules read them;
// has says which keys the test wrote (and the tool reads).
func argValues(s *Scenario, a *Args, has func(string) bool) tool.Values {
	return tool.Values{Get: func(k string) any { return argValue(a, k) }, Has: has, Serving: s != nil && s.Serving != nil}
}

// ArgText is a string argument of the test: its value, else its tool's
// default for it (a test built in code never went through ApplyDefaults);
// "" for a key the tool does not read.
func (t *Test) ArgText(key string) string {
	if s, _ := argValue(&t.Args, key).(string); s != "" {
		return s
	}
	spec, _ := tool.Lookup(t.Tool)
	for _, arg := range spec.Args {
		if arg.Key == key && arg.Default != nil {
			return arg.Default(argValues(nil, &t.Args, func(string) bool { return false }))
		}
	}
	return ""
}
