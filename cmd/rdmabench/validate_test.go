package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scenariosDir is the scenarios package directory (shipped files, testdata).
const scenariosDir = "../../scenarios"

// cli runs the command line in-process, failing the test on a panic.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("rdmabench %q panicked: %v", args, r)
		}
	}()
	code = runWith(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestValidateShipped(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(scenariosDir, "*.yaml"))
	if len(files) < 4 {
		t.Fatalf("shipped scenarios: %v", files)
	}
	code, out, errs := cli(t, append([]string{"validate"}, files...)...)
	// The kube scenarios name the placeholder image: a warning, not an error.
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		if line != "" && !strings.Contains(line, ": warning: cluster.image is the placeholder") && !strings.Contains(line, ": warning: cluster.toolsImage is the placeholder") {
			t.Errorf("stderr line %q: want only placeholder-image warnings", line)
		}
	}
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	for _, f := range files {
		if !strings.Contains(out, f+": ok\n") {
			t.Errorf("stdout lacks %q:\n%s", f+": ok", out)
		}
	}
}

// Every broken case through the CLI: exit 2, stderr is exactly the golden
// error text (FILE:LINE:COL first), stdout says nothing.
func TestValidateBroken(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(scenariosDir, "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "broken", "*.yaml"))
	if len(files) < 25 {
		t.Fatalf("want at least 25 broken cases, found %d", len(files))
	}
	t.Chdir(filepath.Join(dir, "broken"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			code, out, errs := cli(t, "validate", name+".yaml")
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			golden, err := os.ReadFile(filepath.Join(dir, "golden", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if errs != string(golden) {
				t.Errorf("stderr:\n%s\nwant:\n%s", errs, golden)
			}
			if !strings.HasPrefix(errs, name+".yaml:") {
				t.Errorf("stderr does not start with the file name: %q", errs)
			}
		})
	}
}

// A mix of good and bad files: each good one is reported ok, every problem
// of the bad ones goes to stderr, and the exit code is 2.
func TestValidateMixed(t *testing.T) {
	good := filepath.Join(scenariosDir, "loopback.yaml")
	bad := filepath.Join(scenariosDir, "testdata/broken/unknown-pool.yaml")
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	code, out, errs := cli(t, "validate", good, bad, missing)
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	if out != good+": ok\n" {
		t.Errorf("stdout %q", out)
	}
	for _, want := range []string{bad + ":13:11: tests[0].from: unknown pool \"decod\"", bad + ":14:9:", missing + ": no such file"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func TestValidateJSON(t *testing.T) {
	bad := filepath.Join(scenariosDir, "testdata/broken/replicas-zero.yaml")
	code, out, _ := cli(t, "validate", "-o", "json", bad)
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	var res []validateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(res) != 1 || res[0].OK || len(res[0].Errors) != 2 || res[0].Errors[0].Line != 7 || res[0].Errors[0].Col != 15 ||
		res[0].Errors[0].Path != "pools[0].replicas" || res[0].Errors[0].Hint == "" {
		t.Errorf("json result: %s", out)
	}
}

// cobra's own argument and flag errors are usage errors too.
func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"validate"},
		{"validate", "--bogus", "x.yaml"},
		{"validate", "-o", "yaml", "x.yaml"},
		{"init", "a", "b"},
		{"init", "no-such-scenario"},
		{"schema", "extra"},
		{"no-such-command"},
		{"valdate"},
	} {
		code, out, errs := cli(t, args...)
		if code != 2 || !strings.HasPrefix(errs, "rdmabench: ") {
			t.Errorf("rdmabench %q: exit %d, stdout %q, stderr %q; want exit 2 and a message", args, code, out, errs)
		}
	}
	if _, _, errs := cli(t, "valdate"); !strings.Contains(errs, `did you mean validate?`) {
		t.Errorf("no suggestion: %q", errs)
	}
}

// `rdmabench version` and `rdmabench --version` start with the same line.
func TestVersionFlagAndCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || !strings.HasPrefix(out, "rdmabench "+buildVersion()+"\n") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// A kube scenario that still names the placeholder image validates (exit
// 0) with a warning that says how to build and push the tools image.
func TestValidateWarnsOnThePlaceholderImage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cmd := newValidateCmd(&stdout, &stderr)
	cmd.SetArgs([]string{"../../scenarios/pd-disagg.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("validate: %v (stderr %s)", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "pd-disagg.yaml: ok") {
		t.Errorf("stdout %q: want ok", stdout.String())
	}
	if w := stderr.String(); !strings.Contains(w, "warning: cluster.toolsImage is the placeholder "+PlaceholderImage) || !strings.Contains(w, "make image") {
		t.Errorf("stderr %q: want the placeholder warning", w)
	}
	stdout.Reset()
	stderr.Reset()
	cmd = newValidateCmd(&stdout, &stderr)
	cmd.SetArgs([]string{"../../scenarios/loopback.yaml"})
	if err := cmd.Execute(); err != nil || stderr.Len() != 0 {
		t.Errorf("local scenario: %v, stderr %q; want no warning", err, stderr.String())
	}
}
