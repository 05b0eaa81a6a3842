package scenarios

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

var (
	argKeys    = sortedKeys(yamlFields(reflect.TypeFor[Args]()))
	expectKeys = sortedKeys(yamlFields(reflect.TypeFor[Expect]()))
)

// meaningless reports the keys under section that the tool does not read:
// a silently ignored qps on rping would be a test that is not what it says.
func (v *validator) meaningless(path, section, tool string, owner any, keys, allowed []string) map[string]bool {
	bad := map[string]bool{}
	for _, k := range keys {
		p := path + "." + section + "." + k
		if v.written(p, owner, k) && !contains(allowed, k) {
			v.keyErrf(p, fmt.Sprintf("%s reads %s: %s", tool, section, strings.Join(allowed, ", ")), "%s means nothing for %s", k, tool)
			bad[k] = true
		}
	}
	return bad
}

// args checks a test's args by its tool's argument schema: each key the
// tool reads, then the tool's rules across keys.
func (v *validator) args(path string, t *Test) {
	spec, _ := tool.Lookup(t.Tool)
	bad := v.meaningless(path, "args", t.Tool, &t.Args, argKeys, spec.ArgKeys())
	ap := path + ".args"
	a := &t.Args
	vals := argValues(v.s, a, func(k string) bool { return v.written(ap+"."+k, a, k) && !bad[k] })
	for i := range spec.Args {
		v.arg(ap, t.Tool, &spec.Args[i], a, vals)
	}
	for _, rule := range spec.ArgRules {
		for _, p := range rule(vals) {
			v.errf(ap+"."+p.Key, p.Hint, "%s", p.Msg)
		}
	}
}

// arg checks one key of the schema, when the test wrote it, when it holds
// a value (a default), or always: its relation to other keys, its form,
// then its value.
func (v *validator) arg(ap, name string, arg *tool.Arg, a *Args, vals tool.Values) {
	p := ap + "." + arg.Key
	has := vals.Has(arg.Key)
	if !has && !arg.Always && !argSet(a, arg.Key) {
		return
	}
	if arg.Conflict != nil && has {
		if msg, hint := arg.Conflict(vals); msg != "" {
			v.errf(p, hint, "%s", msg)
		}
	}
	field := argField(a, arg.Key)
	if !field.IsValid() {
		return // TestSchemaKeysAreArgs names it
	}
	switch f := field.Addr().Interface().(type) {
	case *string:
		v.argString(p, name, arg, *f)
	case *int:
		v.argInt(p, arg, *f)
	case **int:
		if *f != nil {
			v.argInt(p, arg, **f)
		}
	case *Size:
		if v.checkSize(p, f) {
			v.argCheck(p, arg, tool.Value{Bytes: f.Bytes, Text: f.Raw})
		}
	case *[]Size:
		for i := range *f {
			s, pi := &(*f)[i], fmt.Sprintf("%s[%d]", p, i)
			if v.checkSize(pi, s) {
				v.argCheck(pi, arg, tool.Value{Bytes: s.Bytes, Text: s.Raw})
			}
		}
	case *Duration:
		v.checkDuration(p, f)
	case *[]string:
		for i, s := range *f {
			v.argString(fmt.Sprintf("%s[%d]", p, i), name, arg, s)
		}
	}
}

// argString checks a string (or an item of a list): required, one of the
// allowed values, or not empty where any word will do, then the tool's
// own rule.
func (v *validator) argString(p, name string, arg *tool.Arg, s string) {
	switch {
	case s == "" && arg.EmptyOK:
		return
	case s == "" && arg.Required:
		v.errf(p, arg.What+" are: "+strings.Join(arg.OneOf, ", "), "%s needs args.%s", name, arg.Key)
		return
	case len(arg.OneOf) > 0:
		if !v.checkOneOf(p, s, arg.What, arg.OneOf) {
			return
		}
	case arg.Kind == tool.KindStrings && strings.TrimSpace(s) == "":
		v.errf(p, "write "+arg.Hint, "item is empty")
		return
	}
	v.argCheck(p, arg, tool.Value{Text: s})
}

func (v *validator) argInt(p string, arg *tool.Arg, n int) {
	if arg.Min > 0 && n < arg.Min {
		v.checkMin(p, n, arg.Min, arg.Hint)
		return
	}
	v.argCheck(p, arg, tool.Value{Int: n})
}

// argCheck applies the tool's own rule on a value whose form passed.
func (v *validator) argCheck(p string, arg *tool.Arg, x tool.Value) {
	if arg.Check == nil {
		return
	}
	if msg, hint := arg.Check(x); msg != "" {
		v.errf(p, hint, "%s", msg)
	}
}

func (v *validator) expect(path string, t *Test) {
	allowed := tool.ExpectKeys(t.Tool, t.Settings())
	bad := v.meaningless(path, "expect", tool.Subject(t.Tool, t.Settings()), &t.Expect, expectKeys, allowed)
	ep := path + ".expect"
	e := &t.Expect
	has := func(k string) bool { return v.written(ep+"."+k, e, k) && !bad[k] }
	if has("minLineRate") {
		v.checkPercent(ep+".minLineRate", &e.MinLineRate)
		if !v.s.LineRate.IsSet() {
			v.errf(ep+".minLineRate", "set lineRate: 400Gb/s (or lineRate: auto to read it from the NIC) at the top of the file",
				"a percent of line rate needs a lineRate")
		}
	}
	if has("minBandwidth") {
		v.checkRate(ep+".minBandwidth", &e.MinBandwidth, false)
	}
	if has("minBusBW") {
		v.checkRate(ep+".minBusBW", &e.MinBusBW, false)
	}
	for _, k := range []string{"maxLatency", "maxP99Latency"} {
		if has(k) {
			d := map[string]*Duration{"maxLatency": &e.MaxLatency, "maxP99Latency": &e.MaxP99Latency}[k]
			v.checkDuration(ep+"."+k, d)
		}
	}
	if has("transport") {
		v.checkOneOf(ep+".transport", e.Transport, "transports", Requirements)
	}
	if has("affinity") {
		v.checkOneOf(ep+".affinity", e.Affinity, "affinity relations", AffinityRelations)
	}
	if has("minPings") {
		v.checkMin(ep+".minPings", e.MinPings, 1, "rping: pings that must complete, 1 or more")
	}
	if has("lowPair") {
		v.lowPair(ep+".lowPair", t)
	}
}
