package main

import (
	"github.com/rdmabench/rdmabench/scenarios"

	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const planScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: cli-plan
backend: local
pools:
  - name: a
  - name: b
tests:
  - name: ucx-tcp
    tool: ucx_perftest
    from: a
    to: b
    args:
      transports: tcp
      sizes: [64KiB]
      iterations: 2000
  - name: iperf3
    tool: iperf3
    from: a
    to: b
    args:
      duration: 3s
`

func writeScenario(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// By default plan prints the summary a person reads: the counts and the
// estimated time, no command line.
func TestPlanSummaryByDefault(t *testing.T) {
	code, out, errs := runCLI(t, "", "plan", writeScenario(t, planScenario))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Plan for cli-plan (backend local)\n",
		"  endpoints        2 (a 1, b 1)\n",
		"  rounds           2\n",
		"  jobs             2\n",
		"  legs             2\n",
		"  estimated time   4.1s (",
		"│ iperf3  │ iperf3       │ pairwise │ 1      │ 1    │ 1    │ 1           │ 3.0s      │",
		"Every command line: -o commands",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ucx_perftest ${addr") {
		t.Errorf("the summary prints command lines:\n%s", out)
	}
}

// -o table is the summary, as it is for run: every command line is -o commands.
func TestPlanTableIsTheSummaryAsInRun(t *testing.T) {
	path := writeScenario(t, planScenario)
	_, summary, _ := runCLI(t, "", "plan", path)
	code, table, errs := runCLI(t, "", "plan", path, "-o", "table")
	if code != 0 || table != summary {
		t.Errorf("plan -o table: exit %d %s\n%s\nwant the summary:\n%s", code, errs, table, summary)
	}
}

func TestPlanCommands(t *testing.T) {
	code, out, errs := runCLI(t, "", "plan", writeScenario(t, planScenario), "-o", "commands")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Plan for cli-plan (backend local): 2 endpoints, 2 rounds, 2 jobs",
		"UCX_TLS=tcp ucx_perftest ${addr:b-0} -p 13337 -t tag_bw -s 65536 -n 2000",
		"iperf3 -s -1 -p 5201",
		"iperf3 -c ${addr:b-0} -p 5201 -t 3 -J",
		"listen :13337",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanJSONAndYAML(t *testing.T) {
	path := writeScenario(t, planScenario)
	code, out, errs := runCLI(t, "", "plan", path, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p struct {
		Scenario string
		Rounds   []struct{ Jobs []struct{ ID string } }
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if p.Scenario != "cli-plan" || len(p.Rounds) != 2 || p.Rounds[0].Jobs[0].ID != "ucx-tcp/r0/a-0->b-0" {
		t.Fatalf("plan %+v", p)
	}
	code, out, _ = runCLI(t, "", "plan", path, "-o", "yaml")
	if code != 0 || !strings.Contains(out, "id: ucx-tcp/r0/a-0->b-0") {
		t.Fatalf("yaml exit %d:\n%s", code, out)
	}
}

func TestPlanErrorsExit2(t *testing.T) {
	bad := strings.Replace(planScenario, "tool: iperf3", "tool: iperf4", 1)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad scenario", []string{"plan", writeScenario(t, bad)}, "iperf4"},
		{"missing file", []string{"plan", filepath.Join(t.TempDir(), "nope.yaml")}, "nope.yaml"},
		{"bad format", []string{"plan", writeScenario(t, planScenario), "-o", "xml"}, "unknown output format"},
		{"no file", []string{"plan"}, "arg"},
	} {
		code, out, errs := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 naming %q", tc.name, code, errs, out, tc.want)
		}
	}
}

// A scenario's problems print as validate prints them: every line starts
// with FILE:LINE:COL (the first one too, with no "rdmabench:" before it).
func TestPlanScenarioErrorsStartWithFile(t *testing.T) {
	bad := strings.Replace(planScenario, "tool: iperf3", "tool: iperf4", 1)
	path := writeScenario(t, bad)
	code, out, errs := runCLI(t, "", "plan", path)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 2 || out != "" || len(lines) != 1 || !regexp.MustCompile(`^`+regexp.QuoteMeta(path)+`:19:11: tests\[1\]\.tool: unknown tool "iperf4" \(did you mean "iperf3"\?`).MatchString(lines[0]) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	_, _, validateErrs := runCLI(t, "", "validate", path)
	if validateErrs != errs {
		t.Errorf("plan and validate print the problems differently:\n%s\n%s", errs, validateErrs)
	}
}

// plan -o completes its six formats.
func TestPlanOutputCompletion(t *testing.T) {
	code, out, _ := runCLI(t, "", "__complete", "plan", "x.yaml", "-o", "")
	if code != 0 || !strings.HasPrefix(out, "table\ncommands\njson\nyaml\nmanifests\ncronjob\n:4\n") {
		t.Errorf("exit %d, completions %q", code, out)
	}
}

const sampleScenario = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: cli-sample
backend: local
pools:
  - name: ep
    replicas: 8
tests:
  - name: a2a
    tool: iperf3
    from: ep
    pattern: all-to-all
    sample: 2
    args: {duration: 1s}
`

// --sample-seed picks the block of a sampled matrix; without it the seed
// is the day number, so that each night takes the next block.
func TestPlanSampleSeed(t *testing.T) {
	path := writeScenario(t, sampleScenario)
	code, out, errs := runCLI(t, "", "plan", path, "--sample-seed", "3", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p struct {
		Rounds  []struct{ Jobs []struct{ ID string } }
		Samples []struct{ Seed, FirstRound, Rounds, RunsToCover int }
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	// 8 endpoints: 7 matrix rounds; seed 3 × 2 partners → from round 6.
	if len(p.Rounds) != 2 || len(p.Samples) != 1 || p.Samples[0].Seed != 3 || p.Samples[0].FirstRound != 6 ||
		p.Samples[0].RunsToCover != 4 || !strings.HasPrefix(p.Rounds[0].Jobs[0].ID, "a2a/r6/") || !strings.HasPrefix(p.Rounds[1].Jobs[0].ID, "a2a/r0/") {
		t.Fatalf("plan %+v", p)
	}
	before := time.Now().UTC().Unix() / 86400
	code, out, _ = runCLI(t, "", "plan", path)
	after := time.Now().UTC().Unix() / 86400
	if code != 0 || (!strings.Contains(out, fmt.Sprintf("(seed %d:", before)) && !strings.Contains(out, fmt.Sprintf("(seed %d:", after))) {
		t.Fatalf("exit %d; the default seed is not the day (%d):\n%s", code, before, out)
	}
}

// --kube-qps and --kube-burst must be positive: a usage error, before any
// cluster is reached.
func TestKubeRateFlags(t *testing.T) {
	kube := writeScenario(t, strings.Replace(strings.Replace(planScenario, "backend: local", "backend: kube\ncluster:\n  image: quay.io/x/tools:1", 1), "ucx-tcp", "ucx", 1))
	for _, args := range [][]string{{"--kube-qps", "0"}, {"--kube-burst", "0"}} {
		code, _, errs := runCLI(t, "", append([]string{"run", kube, "--kubeconfig", filepath.Join(t.TempDir(), "none")}, args...)...)
		if code != 2 || !strings.Contains(errs, "both must be positive (defaults 50 and 100)") {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
}

// plan --quick states the quick profile and a shorter estimate for every
// shipped scenario; without it, each states its estimated time.
func TestPlanQuickEveryShippedScenario(t *testing.T) {
	for _, name := range scenarios.ShippedNames() {
		code, full, errs := runCLI(t, "", "plan", name)
		if code != 0 || !strings.Contains(full, "  estimated time   ") {
			t.Fatalf("%s: exit %d, no estimate: %s%s", name, code, full, errs)
		}
		code, quick, errs := runCLI(t, "", "plan", name, "--quick")
		if code != 0 || !strings.Contains(quick, "  profile          quick profile (--quick)") {
			t.Fatalf("%s --quick: exit %d: %s%s", name, code, quick, errs)
		}
		t.Logf("%s: %s → %s", name, estimateOf(full), estimateOf(quick))
	}
}

func estimateOf(summary string) string {
	for _, l := range strings.Split(summary, "\n") {
		if v, ok := strings.CutPrefix(l, "  estimated time   "); ok {
			return v[:strings.Index(v, " (")]
		}
	}
	return ""
}
