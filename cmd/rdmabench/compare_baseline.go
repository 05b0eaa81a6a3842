package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rdmabench/rdmabench/report"
)

// exitNoBaseline is what `compare --baseline auto` exits with when no run
// qualifies (report.NoBaselineError): the first night, or the first after
// an environment change, has nothing to compare with yet.
const exitNoBaseline = 4

// autoBaseline resolves `compare --baseline auto DIR CURRENT` to the
// report.json paths compare reads, saying on stderr which run it picked
// and why the others were not.
func autoBaseline(mode, dir, current string, stderr io.Writer) (string, string, error) {
	if mode != "auto" {
		return "", "", usageError{fmt.Errorf("--baseline %q: the only mode is auto (or give BASELINE.json as the first argument without --baseline)", mode)}
	}
	current = runReportPath(current)
	cur, err := report.Load(current)
	if err != nil {
		return "", "", inputError{fmt.Errorf("current: %w", err)}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", "", inputError{fmt.Errorf("--baseline auto: %s is not a folder of runs (give the folder rdmabench run writes into, e.g. results/)", dir)}
	}
	choice, err := report.PickBaseline([]string{dir}, cur, current)
	if err != nil {
		return "", "", err
	}
	fmt.Fprintf(stderr, "baseline: %s (%s): %s\n", choice.Run.ID, choice.Path, choice.Why)
	for _, r := range choice.Rejected {
		fmt.Fprintln(stderr, "baseline: not picked:", r)
	}
	return choice.Path, current, nil
}

// runReportPath accepts a run folder for its report.json.
func runReportPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, "report.json")
	}
	return p
}
