package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/schema"
)

// exitNoBaseline is what `compare --baseline auto` exits with when no run
// qualifies (history.NoBaselineError): the first night, or the first after
// an environment change, has nothing to compare with yet.
const exitNoBaseline = 4

// autoBaseline resolves `compare --baseline auto DIR CURRENT`: the
// baseline is built per result from the runs under DIR
// (history.PickSeriesBaseline), and stderr says which runs served and why
// the others did not.
func autoBaseline(mode, dir, current string, stderr io.Writer) (*loaded, *loaded, error) {
	if mode != "auto" {
		return nil, nil, usageError{fmt.Errorf("--baseline %q: the only mode is auto (or give BASELINE.json as the first argument without --baseline)", mode)}
	}
	current = runReportPath(current)
	cur, err := schema.Load(current)
	if err != nil {
		return nil, nil, inputError{fmt.Errorf("current: %w", err)}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil, inputError{fmt.Errorf("--baseline auto: %s is not a folder of runs (give the folder rdmabench run writes into, e.g. results/)", dir)}
	}
	choice, err := history.PickSeriesBaseline([]string{dir}, cur, current)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range choice.Served {
		fmt.Fprintln(stderr, "baseline:", s)
	}
	if choice.Unserved > 0 {
		fmt.Fprintf(stderr, "baseline: %d result(s) passed in no eligible run: compared as new\n", choice.Unserved)
	}
	for _, r := range choice.Rejected {
		fmt.Fprintln(stderr, "baseline: not used:", r)
	}
	path := choice.Report.Run.ID
	if len(choice.Served) == 1 {
		path = strings.SplitN(strings.SplitN(choice.Served[0], " (", 2)[1], "): ", 2)[0]
	}
	return &loaded{path: path, r: choice.Report}, &loaded{path: current, r: cur}, nil
}

// runReportPath accepts a run folder for its report.json.
func runReportPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, "report.json")
	}
	return p
}
