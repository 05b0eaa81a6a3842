package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// A leg of three repetitions interrupted in its third: the two that
// finished were measured, and "everything measured so far is kept" (exit
// codes, 130): the leg is judged on them and says so (the whole leg was
// dropped).
func TestInterruptKeepsFinishedRepetitions(t *testing.T) {
	dir := t.TempDir()
	cnt, pid := filepath.Join(dir, "count"), filepath.Join(dir, "pid")
	script := "n=$(cat " + cnt + " 2>/dev/null || echo 0); n=$((n+1)); echo $n > " + cnt +
		"; if [ $n -ge 3 ]; then echo $$ > " + pid + "; exec sleep 600; fi"
	p := oneLegPlan("trivial", 120,
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: []string{"sh", "-c", script}, Parse: true})
	p.Rounds[0].Jobs[0].Repetitions = 3
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if data, _ := os.ReadFile(pid); strings.HasSuffix(string(data), "\n") {
				cancel()
				return
			}
			select {
			case <-ctx.Done():
				return
			default:
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, out, err := runPlan(t, ctx, p)
	if exitCode(err) != 130 {
		t.Fatalf("exit code %d (%v), want 130", exitCode(err), err)
	}
	saved, lerr := schema.Load(filepath.Join(out, ReportFile))
	if lerr != nil {
		t.Fatal(lerr)
	}
	assertGone(t, pid)
	raws, _ := filepath.Glob(filepath.Join(out, RawDir, "*", "*.out"))
	if len(saved.Results) != 1 {
		t.Fatalf("interrupted=%v, %d results in report.json (raw outputs on disk: %d): the 2 finished repetitions are lost",
			saved.Run.Interrupted, len(saved.Results), len(raws))
	}
	if n := len(saved.Results[0].Repetitions); n < 2 {
		t.Errorf("%d repetitions kept, want the 2 that finished", n)
	}
	if why := saved.Results[0].Reason; !strings.Contains(why, "interrupted after 2 of 3 repetitions") {
		t.Errorf("the leg's reason does not say it was cut short: %q", why)
	}
}

// When report.json cannot be written at the end of a run that was
// interrupted (or had already failed), the error says so (it said
// "partial report written" and dropped the save error).
func TestInterruptedRunSaysWhenReportWasNotWritten(t *testing.T) {
	dir := t.TempDir()
	pid := filepath.Join(dir, "pid")
	p := oneLegPlan("trivial", 120,
		plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleClient, Argv: pidFileCmd(pid, "sleep", "600"), Parse: true})
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if data, _ := os.ReadFile(pid); strings.HasSuffix(string(data), "\n") {
				_ = os.RemoveAll(out) // the results folder is gone (disk, mount, a cleaner)
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := Run(ctx, Config{Plan: p, Backend: local.New(), OutDir: out, Parse: testParse(0), ExitGrace: time.Second, Progress: testWriter{t}})
	assertGone(t, pid)
	if _, serr := os.Stat(filepath.Join(out, ReportFile)); serr == nil {
		t.Skip("report.json was written")
	}
	if err == nil || !strings.Contains(err.Error(), ReportFile) {
		t.Errorf("report.json was not written; the run's error says: %v", err)
	}
}
