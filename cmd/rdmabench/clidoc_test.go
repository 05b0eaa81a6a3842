package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite docs/reference/cli.md from the commands")

// cliDocPath is the CLI reference, generated from the commands themselves.
const cliDocPath = "../../docs/reference/cli.md"

// TestCLIReferenceIsCurrent: docs/reference/cli.md is every command's
// --help, as the binary prints it, so that a flag cannot go undocumented
// or be documented after it changed. `go test ./cmd/rdmabench -run
// TestCLIReferenceIsCurrent -update` rewrites it.
func TestCLIReferenceIsCurrent(t *testing.T) {
	got := renderCLIReference(t)
	if *update {
		if err := os.WriteFile(cliDocPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/rdmabench -run TestCLIReferenceIsCurrent -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("docs/reference/cli.md is not the commands' help: run go test ./cmd/rdmabench -run TestCLIReferenceIsCurrent -update\n%s",
			firstDifference(string(want), got))
	}
}

// renderCLIReference writes the root command and every command under it
// (help and hidden ones aside) as a heading, its one-line summary and its
// --help in a code block: verbatim, since the help texts are plain text
// (paths such as results/<scenario>-… would be eaten as HTML otherwise).
func renderCLIReference(t *testing.T) string {
	t.Helper()
	var discard bytes.Buffer
	root := newRootCmd(strings.NewReader(""), &discard, &discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	var cmds []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		c.InitDefaultHelpFlag() // as Execute does, so that usage lines say [flags]
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	var b strings.Builder
	b.WriteString("# CLI reference\n\n")
	b.WriteString("<!-- Generated from the commands by `go test ./cmd/rdmabench -run TestCLIReferenceIsCurrent -update`: do not edit by hand. -->\n\n")
	b.WriteString("Every command's `--help`, as the binary prints it. A guide to the commands is in\n")
	b.WriteString("[running](../user-guide/running.md#commands); the exit codes in [exit codes](exit-codes.md).\n\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "- [`%s`](#%s) — %s\n", c.CommandPath(), anchorOf(c.CommandPath()), mdText(c.Short))
	}
	for _, c := range cmds {
		var help bytes.Buffer
		c.SetOut(&help)
		c.SetErr(&help)
		if err := c.Help(); err != nil {
			t.Fatalf("%s --help: %v", c.CommandPath(), err)
		}
		c.SetOut(nil)
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n```text\n%s\n```\n", c.CommandPath(), mdText(c.Short), strings.TrimRight(help.String(), "\n"))
	}
	return b.String()
}

// anchorOf is GitHub's anchor for a heading of plain words.
func anchorOf(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}

// mdText escapes what Markdown would read as markup in a one-line summary.
func mdText(s string) string {
	return strings.NewReplacer("<", `\<`, ">", `\>`, "*", `\*`, "_", `\_`).Replace(s)
}

// firstDifference shows where two texts part, with a little context.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  doc:      %q\n  commands: %q", i+1, w, g)
		}
	}
	return ""
}
