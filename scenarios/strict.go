package scenarios

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds the nodes one decode visits, so that aliases expanding
// into each other ("billion laughs") cannot make a scenario unbounded.
const maxNodes = 100000

// decoder walks the YAML node tree alongside the Go types (the scenario's
// own types, never the user's keys), so that every unknown key and wrong
// type is reported with its position instead of stopping at the first.
type decoder struct {
	c      *collector
	pos    *Positions
	budget int
}

var leadingZero = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

// plainDigits is a whole number as people write it; one that does not fit
// an int is too large, not "not a whole number".
var plainDigits = regexp.MustCompile(`^[-+]?[0-9]+$`)

var (
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	posType         = reflect.TypeFor[Pos]()
)

func structValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

// resolve follows aliases and charges the node budget; nil means stop.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode; depth++ {
		if depth > 100 {
			return nil
		}
		n = n.Alias
	}
	if d.budget--; d.budget < 0 {
		if d.budget == -1 {
			d.c.add(nodePos(n), path, "write the values out instead of nesting aliases", "the document expands to more than %d values", maxNodes)
		}
		return nil
	}
	return n
}

// value decodes n into v (addressable) at document path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return
	}
	if reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		if d.want(n, yaml.ScalarNode, path, "a single value such as "+example(v.Type())) {
			_ = v.Addr().Interface().(yaml.Unmarshaler).UnmarshalYAML(n)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.value(n, elem.Elem(), path)
		v.Set(elem)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String:
		if d.want(n, yaml.ScalarNode, path, "a single value (text)") {
			v.SetString(n.Value)
		}
	case reflect.Int:
		d.decodeInt(n, v, path)
	case reflect.Bool:
		d.decodeBool(n, v, path)
	case reflect.Interface:
		if x := d.decodeAny(n, path); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	default:
		panic("scenarios: no decoder for " + v.Type().String())
	}
}

// decodeAny decodes a free-form value (podPatch) as YAML would into any:
// mappings, lists, and scalars by their tag, recording every position so
// that the value's own checks can point into it.
func (d *decoder) decodeAny(n *yaml.Node, path string) any {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		d.eachKey(n, path, func(k, val *yaml.Node, p string) { m[k.Value] = d.decodeAny(val, p) })
		return m
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.pos.set(p, Pos{}, nodePos(item))
			out[i] = d.decodeAny(item, p)
		}
		return out
	}
	var x any
	if err := n.Decode(&x); err != nil {
		d.c.add(nodePos(n), path, "write a plain value: text, a number, true or false", "cannot read %q: %v", n.Value, err)
		return nil
	}
	return x
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// want reports a node of the wrong shape.
func (d *decoder) want(n *yaml.Node, kind yaml.Kind, path, what string) bool {
	if n.Kind == kind {
		return true
	}
	hint := "write " + what
	switch {
	case kind == yaml.SequenceNode && n.Kind == yaml.ScalarNode:
		hint = "write a list, even of one item: [" + n.Value + "] or a \"- \" line per item"
	case kind == yaml.SequenceNode && n.Kind == yaml.MappingNode:
		hint = "write a list: start each item with \"- \""
	}
	d.c.add(nodePos(n), path, hint, "must be %s, not %s", shapeName(kind, what), kindName(n))
	return false
}

func shapeName(kind yaml.Kind, what string) string {
	switch kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return what
}

func example(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Size]():
		return "4KiB"
	case reflect.TypeFor[Rate]():
		return "400Gb/s"
	case reflect.TypeFor[Percent]():
		return "90%"
	case reflect.TypeFor[Duration]():
		return "10s"
	case reflect.TypeFor[GPUCount]():
		return "4 or all"
	}
	return "text"
}

// imagesKey is the per-family containers' key, refused by noImages.
var imagesKey = regexp.MustCompile(`^(cluster|pools\[\d+\])\.images$`)

func (d *decoder) decodeInt(n *yaml.Node, v reflect.Value, path string) {
	if !d.want(n, yaml.ScalarNode, path, "a whole number") {
		return
	}
	if leadingZero.MatchString(n.Value) {
		d.c.add(nodePos(n), path, "YAML may read a leading zero as octal; write the number without it", "%q is ambiguous", n.Value)
		return
	}
	var i int64
	if tag := n.ShortTag(); plainDigits.MatchString(n.Value) && (tag == "!!float" || tag == "!!int" && n.Decode(&i) != nil) {
		d.c.add(nodePos(n), path, "write a smaller whole number, like 4", "%s is too large", n.Value)
		return
	}
	if n.ShortTag() != "!!int" || n.Decode(&i) != nil || i != int64(int(i)) {
		d.c.add(nodePos(n), path, "write a whole number without quotes or units, like 4", "must be a whole number, not %q", n.Value)
		return
	}
	v.SetInt(i)
}

func (d *decoder) decodeBool(n *yaml.Node, v reflect.Value, path string) {
	if !d.want(n, yaml.ScalarNode, path, "true or false") {
		return
	}
	if n.ShortTag() != "!!bool" {
		d.c.add(nodePos(n), path, "write true or false, without quotes", "must be true or false, not %q", n.Value)
		return
	}
	v.SetBool(strings.EqualFold(n.Value, "true"))
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if !d.want(n, yaml.SequenceNode, path, "a list") {
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.pos.set(p, Pos{}, nodePos(item))
		d.value(item, s.Index(i), p)
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode && imagesKey.MatchString(path) {
		return // gone whatever it holds: validate says what to write instead (noImages)
	}
	if !d.want(n, yaml.MappingNode, path, "a mapping of names to values") {
		return
	}
	m := reflect.MakeMap(v.Type())
	d.eachKey(n, path, func(k, val *yaml.Node, p string) {
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, p)
		m.SetMapIndex(reflect.ValueOf(k.Value), e)
	})
	v.Set(m)
}

// eachKey calls fn for each key of a mapping, reporting keys that are not
// plain text, merge keys and duplicates.
func (d *decoder) eachKey(n *yaml.Node, path string, fn func(k, v *yaml.Node, p string)) {
	seen := map[string]Pos{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k = d.resolve(k, path); k == nil {
			return
		}
		if k.Kind != yaml.ScalarNode || isNull(k) {
			d.c.add(nodePos(k), path, "keys are plain names, like replicas", "a key must be a name, not %s", kindName(k))
			continue
		}
		p := joinPath(path, k.Value)
		if k.Value == "<<" && k.Tag == "!!merge" {
			d.c.add(nodePos(k), path, "write the keys out instead of merging a mapping with <<", "merge keys (<<) are not supported")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.c.add(nodePos(k), p, "each key may appear once in a mapping", "%q is already defined at line %d", k.Value, first.Line)
			continue
		}
		seen[k.Value] = nodePos(k)
		d.pos.set(p, nodePos(k), nodePos(val))
		fn(k, val, p)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if !d.want(n, yaml.MappingNode, path, "a mapping of keys to values") {
		return
	}
	fields := yamlFields(v.Type())
	if f, ok := v.Type().FieldByName("Pos"); ok && f.Type == posType {
		v.FieldByIndex(f.Index).Set(reflect.ValueOf(nodePos(n)))
	}
	d.eachKey(n, path, func(k, val *yaml.Node, p string) {
		idx, ok := fields[k.Value]
		if !ok {
			keys := sortedKeys(fields)
			d.c.add(nodePos(k), p, suggest(k.Value, "keys here", keys), "unknown key %q", k.Value)
			// Only an absent key is explained by its misspelling: when the
			// real key is also written, its own problems still count.
			if near := nearest(k.Value, keys); near != "" && !mappingHasKey(n, near) {
				d.c.errs[len(d.c.errs)-1].covers = joinPath(path, near)
			}
			return
		}
		d.value(val, v.Field(idx), p)
	})
}

// yamlFields maps the YAML key of each field of a struct type to its index.
func yamlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			m[name] = i
		}
	}
	return m
}

// yamlName is a field's YAML key, "" when it is not part of the document.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mappingHasKey reports whether the mapping node n writes key.
func mappingHasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
