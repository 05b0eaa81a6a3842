package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/export"
	"github.com/rdmabench/rdmabench/report/history"
	"github.com/rdmabench/rdmabench/report/html"
	"github.com/rdmabench/rdmabench/report/push"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/units"
)

// compareOptions are the flags of `rdmabench compare`.
type compareOptions struct {
	threshold string
	alpha     float64
	html      string
	junit     string
	output    string
	baseline  string
	explain   bool
	metrics   string
	push      string
}

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use: "compare BASELINE CURRENT | compare --baseline BASELINE CURRENT | compare --baseline auto DIR CURRENT",
		Example: `  rdmabench compare results/loopback-20260101-020000 results/loopback-20260102-020000
  rdmabench compare --baseline auto results/ results/loopback-20260102-020000 --junit compare.xml
  rdmabench compare --baseline auto /results /results/pd-disagg-20260102-020000 --push http://pushgateway.monitoring.svc:9091`,
		Short: "Compare a run with a baseline; exit 1 on regression (the nightly CI verb)",
		Long: `compare matches the results of two report.json files by test, pair, backend,
operation and message size, and reports regressions, drops within the noise,
improvements, missing and new results, and differences of environment.

` + compare.Rule + `.

--baseline auto DIR CURRENT builds the baseline itself from the runs under DIR:
` + history.SeriesBaselineRule + `. It says on stderr which runs served which
results and why the others did not.

--baseline BASELINE CURRENT is compare BASELINE CURRENT. BASELINE and CURRENT
may be run folders (their report.json is read).

--metrics FILE and --push URL give the verdicts to Prometheus (the
rdmabench_compare_* families: one status series per row, the change ratio,
the count of regressions, the two run ids); the push goes to the group
job=<scenario>/command=compare, apart from run --push's job=<scenario>,
so that neither replaces the other. Both happen before a regression exits 1.

Exit codes: 0 no regression, 1 regression (or a measured result missing now),
2 unreadable input or bad flags, 4 --baseline auto found no baseline.`,
		Args: o.checkArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			switch o.baseline {
			case "auto":
				base, cur, err := autoBaseline(o.baseline, args[0], args[1], stderr)
				if err != nil {
					return err
				}
				return runCompare(o, base, cur, stdout, stderr)
			case "": // compare BASELINE CURRENT
			default: // compare --baseline BASELINE CURRENT
				args = []string{o.baseline, args[0]}
			}
			return runCompare(o, &loaded{path: runReportPath(args[0])}, &loaded{path: runReportPath(args[1])}, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.threshold, "threshold", "5%", "smallest change that counts, in percent of the baseline")
	f.Float64Var(&o.alpha, "alpha", 0.05, "significance level of the Welch t-test when both runs have repetitions")
	f.StringVar(&o.html, "html", "", "write the comparison as HTML to this file")
	f.StringVar(&o.junit, "junit", "", "write JUnit XML to this file (a failure per regression)")
	f.StringVarP(&o.output, "output", "o", "table", "stdout format: table or json")
	f.StringVar(&o.metrics, "metrics", "", "write the verdicts as OpenMetrics text (rdmabench_compare_*) to this file (atomically)")
	f.StringVar(&o.push, "push", "", "push the verdicts to this Prometheus Pushgateway, group job=<scenario>/command=compare, e.g. http://pushgateway.monitoring.svc:9091")
	f.BoolVar(&o.explain, "explain", false, "after the table, the rule that decided each status")
	f.StringVar(&o.baseline, "baseline", "", `"auto": the first argument is a folder of runs to pick the baseline from; else the baseline's report.json or run folder (then one argument, CURRENT)`)
	return cmd
}

// checkArgs: two arguments, or CURRENT alone after --baseline PATH.
func (o *compareOptions) checkArgs(_ *cobra.Command, args []string) error {
	if o.baseline != "" && o.baseline != "auto" {
		if _, err := os.Stat(o.baseline); err != nil {
			return usageError{fmt.Errorf("--baseline %q: no such report.json or run folder (the only mode is auto)", o.baseline)}
		}
	}
	switch {
	case o.baseline == "auto" && len(args) != 2:
		return usageError{fmt.Errorf("compare --baseline auto needs DIR (the runs to choose from) and CURRENT, got %d argument(s)", len(args))}
	case o.baseline != "" && o.baseline != "auto" && len(args) != 1:
		return usageError{fmt.Errorf("compare --baseline %s needs CURRENT alone (the run to compare with it), got %d argument(s)", o.baseline, len(args))}
	case o.baseline == "" && len(args) != 2:
		return usageError{fmt.Errorf("compare needs BASELINE and CURRENT (report.json files or run folders; or --baseline BASELINE CURRENT), got %d argument(s)", len(args))}
	}
	return nil
}

// loaded is a report given by its path, or already read (r set).
type loaded struct {
	path string
	r    *schema.Report
}

func (l *loaded) load() (*schema.Report, error) {
	if l.r != nil {
		return l.r, nil
	}
	return schema.Load(l.path)
}

func runCompare(o *compareOptions, baseIn, curIn *loaded, stdout, stderr io.Writer) error {
	basePath, curPath := baseIn.path, curIn.path
	if err := checkOutput(o.output); err != nil {
		return err
	}
	threshold, err := units.ParsePercent(o.threshold)
	if err != nil || threshold < 0 {
		return usageError{fmt.Errorf("--threshold %q: want a percent such as 5%%", o.threshold)}
	}
	// A bare fraction (0.05) is most likely meant as 5%: refuse to guess.
	if !strings.HasSuffix(strings.TrimSpace(o.threshold), "%") && threshold > 0 && threshold < 1 {
		return usageError{fmt.Errorf("--threshold %s is ambiguous: write %g%% for %g percent, or %s%% for a fraction of a percent", o.threshold, threshold*100, threshold*100, o.threshold)}
	}
	if o.alpha <= 0 || o.alpha >= 1 {
		return usageError{fmt.Errorf("--alpha %g: want a probability between 0 and 1, such as 0.05", o.alpha)}
	}
	if o.push != "" {
		if err := push.CheckURL(o.push); err != nil {
			return usageError{fmt.Errorf("--push: %w", err)}
		}
	}
	base, err := baseIn.load()
	if err != nil {
		return inputError{fmt.Errorf("baseline: %w", err)}
	}
	cur, err := curIn.load()
	if err != nil {
		return inputError{fmt.Errorf("current: %w", err)}
	}
	c := compare.Compare(base, cur, compare.Options{ThresholdPct: threshold, Alpha: o.alpha})
	c.Baseline.Path, c.Current.Path = basePath, curPath
	for _, w := range c.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if err := writeCompareFiles(o, c, cur.Run.Scenario, stderr); err != nil {
		return err
	}
	if o.output == "json" {
		err = writeJSON(stdout, c)
	} else {
		err = compare.WriteTable(stdout, c)
		if err == nil && o.explain {
			err = compare.WriteRule(stdout, c)
		}
	}
	if err != nil {
		return err
	}
	pushErr := pushCompare(o.push, c, cur.Run.Scenario, stderr)
	if n := c.Regressions(); n > 0 {
		if pushErr != nil { // the regression decides the exit code; the failed push is said
			fmt.Fprintln(stderr, "rdmabench:", pushErr)
		}
		return &compare.RegressionError{N: n, Missing: c.Lost()}
	}
	return pushErr
}

// pushCompare pushes c's verdicts to the Pushgateway at gateway ("" for
// none) in the group job=SCENARIO/command=compare.
func pushCompare(gateway string, c *compare.Comparison, scenario string, stderr io.Writer) error {
	if gateway == "" {
		return nil
	}
	var body bytes.Buffer
	if err := export.WriteCompareOpenMetrics(&body, c, scenario); err != nil {
		return err
	}
	return pushText(context.Background(), gateway, scenario, body.Bytes(), stderr, "command", "compare")
}

func writeCompareFiles(o *compareOptions, c *compare.Comparison, scenario string, stderr io.Writer) error {
	if o.metrics != "" {
		if err := writeFileWith(o.metrics, func(w io.Writer) error { return export.WriteCompareOpenMetrics(w, c, scenario) }); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", o.metrics)
	}
	if o.html != "" {
		if err := writeFileWith(o.html, func(w io.Writer) error { return html.WriteCompare(w, c) }); err != nil {
			return err
		}
		wroteHTML(stderr, o.html)
	}
	if o.junit != "" {
		if err := writeFileWith(o.junit, func(w io.Writer) error { return export.WriteCompareJUnit(w, c) }); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", o.junit)
	}
	return nil
}
