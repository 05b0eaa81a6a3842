package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

func TestInitList(t *testing.T) {
	code, out, _ := cli(t, "init")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range scenarios.ShippedScenarios() {
		if !strings.Contains(out, s.Name) || !strings.Contains(out, s.Description) {
			t.Errorf("list lacks %s: %s", s.Name, out)
		}
	}
}

// init writes a shipped scenario that validates, refuses to overwrite it,
// and overwrites with --force.
func TestInitWrites(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if code, _, errs := cli(t, "init", "pd-disagg"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want, _ := scenarios.ShippedScenario("pd-disagg")
	got, err := os.ReadFile("pd-disagg.yaml")
	if err != nil || string(got) != string(want.Data) {
		t.Fatalf("pd-disagg.yaml: %v", err)
	}
	if code, out, _ := cli(t, "validate", "pd-disagg.yaml"); code != 0 || out != "pd-disagg.yaml: ok\n" {
		t.Errorf("written file does not validate: %d %q", code, out)
	}
	_ = os.WriteFile("pd-disagg.yaml", []byte("mine"), 0o644)
	code, _, errs := cli(t, "init", "pd-disagg")
	if code != 2 || !strings.Contains(errs, "already exists") || !strings.Contains(errs, "--force") {
		t.Errorf("overwrite without --force: exit %d, %q", code, errs)
	}
	if b, _ := os.ReadFile("pd-disagg.yaml"); string(b) != "mine" {
		t.Errorf("file was overwritten without --force")
	}
	if code, _, _ := cli(t, "init", "pd-disagg", "--force"); code != 0 {
		t.Errorf("--force: exit %d", code)
	}
	if b, _ := os.ReadFile("pd-disagg.yaml"); string(b) != string(want.Data) {
		t.Errorf("--force did not overwrite")
	}
}

func TestInitOutput(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := cli(t, "init", "wideep", "-o", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "wideep.yaml")); err != nil {
		t.Errorf("-o DIR: %v", err)
	}
	file := filepath.Join(dir, "mine.yaml")
	if code, _, _ := cli(t, "init", "loopback.yaml", "-o", file); code != 0 {
		t.Fatalf("-o FILE: exit %d", code)
	}
	if _, err := scenarios.Load(file); err != nil {
		t.Errorf("-o FILE: %v", err)
	}
	code, out, _ := cli(t, "init", "backend-compare", "-o", "-")
	if want, _ := scenarios.ShippedScenario("backend-compare"); code != 0 || out != string(want.Data) {
		t.Errorf("-o -: exit %d", code)
	}
	if code, _, errs := cli(t, "init", "wideep", "-o", filepath.Join(dir, "no", "such", "dir", "x.yaml")); code != 2 || !strings.Contains(errs, "cannot write") {
		t.Errorf("unwritable: exit %d %q", code, errs)
	}
}

func TestSchemaCommand(t *testing.T) {
	code, out, _ := cli(t, "schema")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil || s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("schema output: %v", err)
	}
}

func TestInitCompletesNames(t *testing.T) {
	code, out, _ := cli(t, "__complete", "init", "")
	if code != 0 || !strings.Contains(out, "pd-disagg\n") || !strings.Contains(out, "loopback\n") {
		t.Errorf("completion: exit %d %q", code, out)
	}
}

// run, preflight and plan take a shipped name as init does: they complete
// the names that start with what was typed, and files where none does.
func TestScenarioArgumentCompletesShippedNames(t *testing.T) {
	for _, cmd := range []string{"run", "preflight", "plan"} {
		code, out, _ := cli(t, "__complete", cmd, "pd")
		if code != 0 || !strings.Contains(out, "pd-disagg\n") || strings.Contains(out, "loopback\n") || !strings.Contains(out, ":4\n") {
			t.Errorf("%s pd<TAB>: exit %d %q", cmd, code, out)
		}
		code, out, _ = cli(t, "__complete", cmd, "./my")
		if code != 0 || strings.Contains(out, "pd-disagg") || !strings.Contains(out, ":0\n") {
			t.Errorf("%s ./my<TAB>: exit %d %q, want file completion", cmd, code, out)
		}
	}
}
