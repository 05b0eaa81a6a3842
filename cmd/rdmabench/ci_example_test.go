package main

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The CI example (examples/ci, docs/user-guide/nightly-ci.md) parses, and uses the commands and flags as
// this rdmabench has them.
func TestCIExampleParses(t *testing.T) {
	data, err := os.ReadFile("../../examples/ci/github-actions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			Steps []struct {
				Name string            `yaml:"name"`
				Run  string            `yaml:"run"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("examples/ci/github-actions.yaml: %v", err)
	}
	if wf.On["schedule"] == nil || len(wf.Jobs["fabric"].Steps) < 5 {
		t.Fatalf("workflow: %+v", wf)
	}
	var all strings.Builder
	for _, s := range wf.Jobs["fabric"].Steps {
		all.WriteString(s.Run + "\n" + s.With["path"] + "\n")
	}
	for _, want := range []string{"rdmabench run \"$SCENARIO\" --out", "--junit", "rdmabench compare --baseline auto \"$RUNS\"",
		"\"$rc\" -eq 4", "--metrics", "rdmabench history", "report.html", "compare.html"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the workflow has no %q", want)
		}
	}
	// Every flag it passes exists.
	for _, args := range [][]string{{"run", "--out", "x", "--junit", "y", "--help"}, {"compare", "--baseline", "auto", "--junit", "a", "--html", "b", "--help"},
		{"report", "--metrics", "m", "--help"}, {"history", "--html", "h", "--rows", "30", "--help"}} {
		if code, _, stderr := runCLI(t, "", args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
