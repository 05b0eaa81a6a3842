package history

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// The whole-run baseline is the latest earlier run that passed with the
// same fingerprint; the runs passed over are counted by reason, and when
// none qualifies the error says why each was not.
func TestPickBaseline(t *testing.T) {
	dir := t.TempDir()
	paths, reps := fixture.Nightly(20)
	reps[18].Results[0].Verdict = schema.VerdictFail
	reps[18].Summary = schema.CountVerdicts(reps[18].Results)
	fixture.WriteRuns(t, dir, paths, reps)
	cur := filepath.Join(dir, paths[19])
	choice, err := PickBaseline([]string{dir}, reps[19], cur)
	if err != nil {
		t.Fatal(err)
	}
	if choice.Run.ID != "nightly-17" || choice.Path != filepath.Join(dir, paths[17]) {
		t.Errorf("picked %s (%s), want nightly-17", choice.Run.ID, choice.Path)
	}
	if !strings.HasPrefix(choice.Why, "latest passing run of scenario nightly (sha256:abc) with a matching fingerprint (2 key(s)") {
		t.Errorf("why: %s", choice.Why)
	}
	if want := []string{"1 run(s): did not pass (latest nightly-18: fail, 1 pass, 1 fail, 0 error)"}; strings.Join(choice.Rejected, "\n") != strings.Join(want, "\n") {
		t.Errorf("rejected %q, want %q", choice.Rejected, want)
	}
	// Night 12 brought new firmware: every earlier run differs.
	_, err = PickBaseline([]string{dir}, reps[12], filepath.Join(dir, paths[12]))
	var none *NoBaselineError
	if !errors.As(err, &none) {
		t.Fatalf("err %v, want NoBaselineError", err)
	}
	if want := []string{`7 run(s): started after the current run (latest nightly-19)`,
		`12 run(s): fingerprint differs (latest nightly-11: nic.firmware "28.43.1014", current "28.44.1000")`}; strings.Join(none.Rejected, "\n") != strings.Join(want, "\n") {
		t.Errorf("rejected %q, want %q", none.Rejected, want)
	}
	if none.ExitCode() != 4 || !strings.Contains(none.Error(), BaselineRule) {
		t.Errorf("exit %d, %v", none.ExitCode(), none)
	}
}
