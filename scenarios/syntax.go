package scenarios

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Reporting YAML syntax errors at the place they are, with a hint.

// syntaxError reports a YAML syntax error at its line, preferring the clearer
// "tab in indentation" when a tab indents a line at or before it.
func syntaxError(c *collector, data []byte, err error) {
	line, msg := splitYAMLError(err)
	line = errorLine(data, msg, line)
	if p, ok := tabIndent(data, line); ok {
		c.add(p, "", "YAML indents with spaces only: replace the tab with spaces", "a tab character is used for indentation")
		return
	}
	col := firstColumn(data, line)
	if strings.Contains(msg, "mapping values are not allowed") {
		col = secondColon(data, line, col)
	}
	c.add(Pos{Line: line, Col: col}, "", syntaxHint(msg), "YAML syntax error: %s", msg)
}

// maxSearchBytes bounds the work of the line search below, which parses
// each prefix of the file once (a scenario of a few hundred lines costs well
// under a megabyte of parsing).
const maxSearchBytes = 4 << 20

// errorLine finds the line a syntax error is on. yaml.v3 reports parser
// errors at the line (0-based) where the enclosing block started, not where
// the problem is; the first prefix of the file that fails with the same
// message ends on the line that is wrong. The search starts at the reported
// line (the problem cannot be before its enclosing block).
func errorLine(data []byte, msg string, reported int) int {
	lines := strings.SplitAfter(string(data), "\n")
	start := min(max(reported-1, 0), len(lines))
	end := len(strings.Join(lines[:start], ""))
	budget := maxSearchBytes
	for i := start; i < len(lines); i++ {
		end += len(lines[i])
		if budget -= end; budget < 0 {
			break
		}
		if err := parseAll(data[:end]); err != nil {
			if _, m := splitYAMLError(err); m == msg {
				return i + 1
			}
		}
	}
	return reported
}

// parseAll parses every document of data, returning the first error.
func parseAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// splitYAMLError takes "yaml: line 3: mapping values are not allowed in
// this context" apart; line is 1 when the message names none.
func splitYAMLError(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return max(n, 1), text
			}
		}
	}
	return 1, msg
}

func syntaxHint(msg string) string {
	switch {
	case strings.Contains(msg, "mapping values are not allowed"):
		return "a value holding \": \" must be quoted, or a key is indented wrongly"
	case strings.Contains(msg, "did not find expected key"), strings.Contains(msg, "did not find expected '-'"):
		return "check the indentation of this line against the lines above it"
	case strings.Contains(msg, "could not find expected ':'"):
		return "every key needs a \": \" before its value"
	case strings.Contains(msg, "already defined"):
		return "each key may appear once in a mapping"
	}
	return "check quoting and indentation around this line"
}

// tabIndent finds a tab in the leading whitespace of a line up to line limit.
func tabIndent(data []byte, limit int) (Pos, bool) {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 > limit {
			break
		}
		for j, r := range l {
			if r == '\t' {
				return Pos{Line: i + 1, Col: j + 1}, true
			}
			if r != ' ' {
				break
			}
		}
	}
	return Pos{}, false
}

// secondColon is the column of the second ": " on a line (the one YAML
// cannot take: "from: decode: prefill"), or def.
func secondColon(data []byte, line, def int) int {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return def
	}
	l := lines[line-1] + " "
	first := strings.Index(l, ": ")
	if first < 0 {
		return def
	}
	if second := strings.Index(l[first+2:], ": "); second >= 0 {
		return first + 2 + second + 1
	}
	return def
}

// firstColumn is the column of the first non-blank character of a line.
func firstColumn(data []byte, line int) int {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return 1
	}
	l := lines[line-1]
	return len(l) - len(strings.TrimLeft(l, " \t")) + 1
}
