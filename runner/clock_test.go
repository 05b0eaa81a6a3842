package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// replayCmd prints the real captures in turn, one per start (the last one
// again once all were printed), as a perftest client would print them.
func replayCmd(t *testing.T, captures ...string) []string {
	dir := t.TempDir()
	root := filepath.Join("..", "testdata", "softroce")
	var script strings.Builder
	script.WriteString("n=$(cat " + dir + "/n 2>/dev/null || echo 0); echo $((n+1)) > " + dir + "/n\ncase $n in\n")
	for i, c := range captures {
		abs, err := filepath.Abs(filepath.Join(root, c))
		if err != nil {
			t.Fatal(err)
		}
		pattern := "*"
		if i < len(captures)-1 {
			pattern = string(rune('0' + i))
		}
		script.WriteString(pattern + ") cat '" + abs + "';;\n")
	}
	script.WriteString("esac\n")
	return []string{"sh", "-c", script.String()}
}

// A repetition whose tool could not time itself (perftest without a CPU
// clock rate, real soft-RoCE captures) is run again, and the result says
// so; the figures are the rerun's.
func TestClockFailureRunsAgain(t *testing.T) {
	p := oneLegPlan("ib_write_bw", 30, plan.PlannedCommand{
		Endpoint: "client-0", Role: tools.RoleClient, Parse: true,
		Argv: replayCmd(t, "error_no_clock_bw_client.txt", "ib_write_bw_64k_client.txt"),
	})
	out := t.TempDir()
	rep, err := runClockPlanIn(t, p, out)
	if err != nil && exitCode(err) != 1 {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Verdict == schema.VerdictError || r.BestBps <= 0 || len(r.Repetitions) != 1 ||
		!strings.Contains(r.Reason, "repetition 1/1 ran twice: the first run had no figures (client: perftest printed no figures") {
		t.Fatalf("verdict %s best %v reps %d reason %q; want the rerun's figure and the rerun named", r.Verdict, r.BestBps, len(r.Repetitions), r.Reason)
	}
	// Both runs' outputs are kept: the reason's evidence, then the figures.
	wantRaw(t, out, r.RawOutputs, "error_no_clock_bw_client.txt", "ib_write_bw_64k_client.txt")
}

// wantRaw checks the result's raw outputs, in order, against the captures
// each one should hold.
func wantRaw(t *testing.T, out string, raw []string, captures ...string) {
	t.Helper()
	if len(raw) != len(captures) {
		t.Fatalf("raw outputs %q; want %d", raw, len(captures))
	}
	for i, rel := range raw {
		got, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "testdata", "softroce", captures[i]))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s does not hold %s", rel, captures[i])
		}
	}
}

// A tool that never gets a clock rate: two reruns, then clock_error with
// perftest's reason, never 0 b/s.
func TestClockFailureIsAnError(t *testing.T) {
	p := oneLegPlan("ib_write_bw", 30, plan.PlannedCommand{
		Endpoint: "client-0", Role: tools.RoleClient, Parse: true,
		Argv: replayCmd(t, "error_no_clock_bw_client.txt"),
	})
	out := t.TempDir()
	rep, _ := runClockPlanIn(t, p, out)
	r := rep.Results[0]
	if r.Verdict != schema.VerdictError || r.ErrorClass != parsers.ClassClock || r.BestBps != 0 ||
		!strings.Contains(r.Reason, "repetition 1/1 ran 3 times, without figures each time") || !strings.Contains(r.Reason, "no CPU clock rate") {
		t.Fatalf("verdict %s class %s best %v reason %q; want clock_error after two reruns", r.Verdict, r.ErrorClass, r.BestBps, r.Reason)
	}
	wantRaw(t, out, r.RawOutputs, "error_no_clock_bw_client.txt", "error_no_clock_bw_client.txt", "error_no_clock_bw_client.txt")
}

// runClockPlanIn runs p on this host without preflight (the captures are a
// soft-RoCE VM's; this host need not have an RDMA device), results in out.
func runClockPlanIn(t *testing.T, p *plan.Plan, out string) (*schema.Report, error) {
	return Run(context.Background(), Config{Plan: p, Backend: local.New(), OutDir: out, Parse: DefaultParse,
		NoPreflight: true, HasRDMA: func() (bool, string) { return true, "" }, ExitGrace: time.Second, Progress: testWriter{t}})
}
