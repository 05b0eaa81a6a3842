package scenarios

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Decode parses one scenario document strictly: the text must be YAML, hold
// exactly one mapping, name this build's apiVersion and kind, and use only
// known keys with values of the right type. It neither defaults nor
// validates; every problem it finds is in the returned ErrorList. When the
// document is a scenario mapping but some fields are wrong, it returns the
// scenario decoded as far as possible together with the errors, so that
// validation can still report the other problems in the same pass.
func Decode(name string, data []byte) (*Scenario, error) {
	c := &collector{file: name}
	root := parseDocument(c, data)
	if root == nil {
		return nil, c.err()
	}
	if !checkVersion(c, root) {
		return nil, c.err()
	}
	s := &Scenario{File: name, Positions: newPositions()}
	d := &decoder{c: c, pos: s.Positions, budget: maxNodes}
	d.decodeStruct(root, structValue(s), "")
	return s, c.err()
}

// parseDocument turns the bytes into the document's top mapping node, or
// reports why it cannot (binary data, syntax error, empty, several documents,
// not a mapping) and returns nil.
func parseDocument(c *collector, data []byte) *yaml.Node {
	if enc := utf16Encoding(data); enc != "" {
		c.add(Pos{1, 1}, "", "save it as UTF-8, e.g. iconv -f "+enc+" -t UTF-8 FILE > FILE.utf8.yaml",
			"the file is %s text; a scenario is read as UTF-8", enc)
		return nil
	}
	if p, msg, ok := binaryAt(data); !ok {
		c.add(p, "", "a scenario is a UTF-8 YAML text file; check that the right file was given", "%s", msg)
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			c.add(Pos{1, 1}, "", "start from a shipped one: rdmabench init loopback", "the file is empty")
			return nil
		}
		syntaxError(c, data, err)
		return nil
	}
	if !secondDocumentOK(c, data, dec) {
		return nil
	}
	top := documentContent(&doc)
	if top == nil {
		c.add(Pos{1, 1}, "", "start from a shipped one: rdmabench init loopback", "the file holds no scenario (only comments or null)")
		return nil
	}
	if top.Kind != yaml.MappingNode {
		c.add(nodePos(top), "", "a scenario is a mapping that starts with apiVersion: "+APIVersion,
			"the document is %s, not a mapping of keys to values", kindName(top))
		return nil
	}
	return top
}

// documentContent is the node under the document, nil when there is none.
func documentContent(doc *yaml.Node) *yaml.Node {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
		return nil
	}
	return top
}

// secondDocumentOK reports a second document (or a syntax error in it).
// A trailing empty document ("---" at the end) is harmless.
func secondDocumentOK(c *collector, data []byte, dec *yaml.Decoder) bool {
	var next yaml.Node
	err := dec.Decode(&next)
	switch {
	case errors.Is(err, io.EOF):
		return true
	case err != nil:
		syntaxError(c, data, err)
		return false
	case documentContent(&next) == nil:
		return true
	}
	c.add(secondDocumentPos(data, nodePos(documentContent(&next))), "", "a scenario file holds one document: remove the extra \"---\" or split the file",
		"a second YAML document starts here")
	return false
}

// secondDocumentPos finds the "---" line that starts the second document:
// the last one at or before its first node.
func secondDocumentPos(data []byte, p Pos) Pos {
	lines := strings.Split(string(data), "\n")
	for i := min(p.Line, len(lines)) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i], "---") {
			return Pos{Line: i + 1, Col: 1}
		}
	}
	return p
}

// utf16Encoding recognises UTF-16 (what some Windows editors save) by its
// byte-order mark, or by the NUL byte beside each ASCII letter without one,
// so the error says how to convert rather than "control character 0x0".
func utf16Encoding(data []byte) string {
	switch {
	case len(data) < 2:
		return ""
	case data[0] == 0xff && data[1] == 0xfe, data[0] != 0 && data[1] == 0 && len(data) >= 4 && data[2] != 0 && data[3] == 0:
		return "UTF-16LE"
	case data[0] == 0xfe && data[1] == 0xff, data[0] == 0 && data[1] != 0 && len(data) >= 4 && data[2] == 0 && data[3] != 0:
		return "UTF-16BE"
	}
	return ""
}

// binaryAt finds the first byte that cannot be in a YAML text file.
func binaryAt(data []byte) (Pos, string, bool) {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return Pos{line, col}, "the file is not UTF-8 text (byte 0x" + strconv.FormatUint(uint64(data[i]), 16) + " at offset " + strconv.Itoa(i) + ")", false
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f:
			return Pos{line, col}, "the file holds a control character (0x" + strconv.FormatUint(uint64(r), 16) + ") and is not YAML text", false
		case r == '\n':
			line, col = line+1, 0
		}
		col++
		i += size
	}
	return Pos{}, "", true
}

// checkVersion switches on apiVersion and kind before the strict decode:
// a document of another version would fail with confusing unknown keys.
func checkVersion(c *collector, top *yaml.Node) bool {
	ok := true
	for _, f := range []struct{ key, want string }{{"apiVersion", APIVersion}, {"kind", Kind}} {
		_, v := mappingValue(top, f.key)
		switch {
		case v == nil:
			c.add(nodePos(top), f.key, "add \""+f.key+": "+f.want+"\" at the top of the file", "%s is missing", f.key)
			ok = false
		case v.Kind != yaml.ScalarNode || v.Value != f.want:
			c.add(nodePos(v), f.key, "this build reads "+f.key+": "+f.want, "unsupported %s %q", f.key, scalarOr(v))
			ok = false
		}
	}
	return ok
}

// mappingValue finds key in a mapping node.
func mappingValue(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func scalarOr(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return kindName(n)
}

func nodePos(n *yaml.Node) Pos { return Pos{Line: max(n.Line, 1), Col: max(n.Column, 1)} }

// kindName names a node's shape the way a user thinks of it.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "empty (null)"
		}
		return "a single value (" + strconv.Quote(n.Value) + ")"
	}
	return "not a value"
}
