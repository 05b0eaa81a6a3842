package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command's help has an Example, and every example parses: it names
// the command it documents and only flags that command has (a renamed
// flag would otherwise leave the help teaching one that fails).
func TestEveryCommandHasAnExampleThatParses(t *testing.T) {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			check(sub)
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Example", c.CommandPath())
			return
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line, _, _ = strings.Cut(line, "#")            // a comment after the command
			for _, seg := range strings.Split(line, "|") { // in a pipeline, rdmabench's part
				if strings.HasPrefix(strings.TrimSpace(seg), "rdmabench") {
					line = seg
				}
			}
			args := shellFields(line)
			if len(args) == 0 {
				continue
			}
			found, rest, err := root.Find(args[1:])
			if err != nil || args[0] != "rdmabench" {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if c != root && found != c && found.Parent() != c { // a parent's example may show a child
				t.Errorf("%s: example %q runs %s", c.CommandPath(), line, found.CommandPath())
				continue
			}
			fs := found.Flags()
			for _, a := range rest {
				if a == ">" || a == "|" {
					break // the shell's part
				}
				name, ok := strings.CutPrefix(a, "--")
				if !ok {
					if short, ok := strings.CutPrefix(a, "-"); ok && len(short) == 1 && fs.ShorthandLookup(short) == nil {
						t.Errorf("%s: example %q: no flag -%s", c.CommandPath(), line, short)
					}
					continue
				}
				name, _, _ = strings.Cut(name, "=")
				if fs.Lookup(name) == nil && found.InheritedFlags().Lookup(name) == nil {
					t.Errorf("%s: example %q: no flag --%s", c.CommandPath(), line, name)
				}
			}
		}
	}
	check(root)
}

// shellFields splits a line into words as a shell does for the examples:
// a "double-quoted" run of words is one word.
func shellFields(line string) []string {
	var words []string
	for i, part := range strings.Split(line, `"`) {
		if i%2 == 1 {
			words = append(words, part)
			continue
		}
		words = append(words, strings.Fields(part)...)
	}
	return words
}
