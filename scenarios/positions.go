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
// written, it is the position of its nearest written parent.
func (p *Positions) Value(path string) Pos {
	return p.lookup(p.valueMap(), path)
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

func (p *Positions) valueMap() map[string]Pos {
	if p == nil {
		return nil
	}
	return p.value
}

func (p *Positions) lookup(m map[string]Pos, path string) Pos {
	for {
		if pos, ok := m[path]; ok {
			return pos
		}
		if path == "" {
			return Pos{Line: 1, Col: 1}
		}
		path = parentPath(path)
	}
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
