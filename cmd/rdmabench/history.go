package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/html"
)

// historyOptions are the flags of `rdmabench history`.
type historyOptions struct {
	html    string
	output  string
	rows    int
	explain bool
}

func newHistoryCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &historyOptions{}
	cmd := &cobra.Command{
		Use: "history DIR…",
		Example: `  rdmabench history results/
  rdmabench history results/ --html trends.html --rows 20`,
		Short: "Every run under some folders as series over time: noise, step-downs, trend charts",
		Long: `history reads every run folder (a folder holding report.json) under the given
folders, recursively, and groups the figures into series: one per scenario, test,
pair, backend, operation and message size, matched as compare matches them. For
each it prints the latest value, the best, the median, the run-to-run noise and
where it stepped down; --html writes one offline page with a trend chart per
series (the worst first) and links to each run's report.

A report.json that cannot be read is a warning naming it; the others are used.
Each run is read from its history.idx (written by run, and here for a run that
has none) while that is current, else from report.json.

` + history.Rule + `.

Exit codes: 0 (also when series stepped down: compare is the CI verb), 2 no
run found or bad flags.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("history needs at least one folder of runs (e.g. results/)")}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error { return runHistory(o, args, stdout, stderr) },
	}
	f := cmd.Flags()
	f.StringVar(&o.html, "html", "", "write the trend charts as one offline HTML file")
	f.StringVarP(&o.output, "output", "o", "table", "stdout format: table or json (every series with every point)")
	f.IntVar(&o.rows, "rows", history.MaxTableRows, "series listed in the table, worst first")
	f.BoolVar(&o.explain, "explain", false, "after the table, how noise and step-downs are judged")
	return cmd
}

func runHistory(o *historyOptions, dirs []string, stdout, stderr io.Writer) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.rows < 1 {
		return usageError{fmt.Errorf("--rows %d: want at least 1", o.rows)}
	}
	h := history.Load(dirs)
	for _, w := range h.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if len(h.Runs) == 0 {
		return inputError{fmt.Errorf("no run found under %v: a run folder holds report.json (rdmabench run writes results/<scenario>-<time>/)", dirs)}
	}
	if o.html != "" {
		dest := o.html
		if err := writeFileWith(dest, func(w io.Writer) error {
			return html.WriteHistory(w, h, html.HistoryOptions{Dir: filepath.Dir(dest)})
		}); err != nil {
			return err
		}
		wroteHTML(stderr, dest)
	}
	if o.output == "json" {
		return writeJSON(stdout, h)
	}
	if err := history.WriteTable(stdout, h, o.rows); err != nil || !o.explain {
		return err
	}
	return history.WriteRule(stdout, h)
}
