package scenarios

import "strings"

// Positions remembers where every key and value of a scenario was written,
// by document path ("tests[1].args.qps"). Validation uses it to point at the
// exact place of a problem, and to tell a field the user wrote from one the
// defaults filled in.
type Positions struct {
	value map[string]Pos
	key   map[string]Pos
}

func newPositions() *Positions {
	return &Positions{value: map[string]Pos{}, key: map[string]Pos{}}
}

// Has reports whether the user wrote the field at path.
func (p *Positions) Has(path string) bool {
	if p == nil {
		return false
	}
	_, ok := p.value[path]
	return ok
}

// Value is where the value at path was written; for a field that was not
// written, it is where its nearest written parent starts (its key, such as
// "cluster:", or the first line of a list item).
func (p *Positions) Value(path string) Pos {
	if p == nil {
		return Pos{} // built in code: no position
	}
	if pos, ok := p.value[path]; ok {
		return pos
	}
	for path != "" {
		path = parentPath(path)
		if pos, ok := p.key[path]; ok {
			return pos
		}
		if pos, ok := p.value[path]; ok {
			return pos
		}
	}
	return Pos{Line: 1, Col: 1}
}

// Key is where the key of the field at path was written (the value's
// position for list items), falling back like Value.
func (p *Positions) Key(path string) Pos {
	if p == nil {
		return Pos{}
	}
	if pos, ok := p.key[path]; ok {
		return pos
	}
	return p.Value(path)
}

// parentPath drops the last element: "a.b[2]" → "a.b", "a.b" → "a".
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func (p *Positions) set(path string, key, value Pos) {
	p.value[path] = value
	if key.Line > 0 {
		p.key[path] = key
	}
}

// joinPath appends a field name to a document path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
