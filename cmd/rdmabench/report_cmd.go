package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rdmabench/rdmabench/report/benchreport"
	"github.com/rdmabench/rdmabench/report/export"
	"github.com/rdmabench/rdmabench/report/html"
	"github.com/rdmabench/rdmabench/report/push"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
)

// reportOptions are the flags of `rdmabench report`.
type reportOptions struct {
	html    string
	junit   string
	output  string
	schema  bool
	metrics string
	push    string
}

// inputError marks a report.json that cannot be read: exit code 2, like a
// usage error, so that CI tells "no data" from "regression".
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }
func (e inputError) ExitCode() int { return exitUsage }

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use: "report RUN/report.json|RUN",
		Example: `  rdmabench report results/pd-disagg-20261125-020000
  rdmabench report results/pd-disagg-20261125-020000/report.json --html review.html --junit junit.xml
  rdmabench report RUN -o openmetrics > fabric.prom
  rdmabench report RUN -o benchmark-report > fabric.br.json`,
		Short: "Re-render a run's report.json: terminal table, JSON, HTML, JUnit",
		Long: `report re-renders a finished run from its report.json, the single source of truth.
It prints the summary table (or -o json), and writes the HTML report and JUnit XML
only where asked: --html auto writes report.html next to the report.json.
--schema prints the JSON Schema of report.json. -o openmetrics prints the run's
figures in the OpenMetrics text format; --metrics FILE writes them to FILE
atomically (temporary file + rename), as node_exporter's textfile collector needs.
-o benchmark-report prints the run as a partial Benchmark Report v0.2, the
format of llm-d-benchmark and the harnesses it converts (inference-perf): the
fabric as a stack component, and per pod pair its bandwidth, share of the line
rate, transport, and what one request's KV transfer adds to TTFT, under
results.observability.rdma_fabric. Merge it into a serving report with
yq ea '. as $i ireduce ({}; . *+ $i)' fabric.br.json serving.yaml.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.schema {
				return printSchema(stdout)
			}
			if len(args) != 1 {
				return usageError{fmt.Errorf("report needs one report.json (or --schema)")}
			}
			return runReport(o, args[0], stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.html, "html", "", `write the HTML report to this file ("auto": report.html next to the report.json)`)
	f.StringVar(&o.junit, "junit", "", "write JUnit XML to this file")
	f.StringVarP(&o.output, "output", "o", "table", "stdout format: table, json, openmetrics or benchmark-report (Benchmark Report v0.2 partial)")
	f.StringVar(&o.metrics, "metrics", "", "write the run's figures as OpenMetrics text to this file (atomically)")
	f.StringVar(&o.push, "push", "", "push the run's figures to this Prometheus Pushgateway (group job=<scenario>), as run --push does")
	f.BoolVar(&o.schema, "schema", false, "print the JSON Schema of report.json and exit")
	return cmd
}

func printSchema(w io.Writer) error {
	data, err := schema.JSONSchema()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

func runReport(o *reportOptions, path string, stdout, stderr io.Writer) error {
	if o.output != "openmetrics" && o.output != "benchmark-report" {
		if err := checkOutput(o.output); err != nil {
			return usageError{fmt.Errorf("-o %q: use table, json, openmetrics or benchmark-report", o.output)}
		}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "report.json") // the run folder itself
	}
	r, err := schema.Load(path)
	if err != nil {
		return inputError{err}
	}
	if err := writeRenderings(r, path, o.html, o.junit, stderr); err != nil {
		return err
	}
	if err := writeMetricsFile(o.metrics, r, stderr); err != nil {
		return err
	}
	if o.push != "" {
		if err := push.CheckURL(o.push); err != nil {
			return usageError{fmt.Errorf("--push: %w", err)}
		}
		if err := pushMetrics(context.Background(), o.push, r, stderr); err != nil {
			return err
		}
	}
	if o.output == "openmetrics" {
		return export.WriteOpenMetrics(stdout, r)
	}
	if o.output == "benchmark-report" {
		return benchreport.Write(stdout, benchreport.Build(r))
	}
	if o.output == "json" {
		return writeJSON(stdout, r)
	}
	return text.WriteSummaryTable(stdout, r)
}

// writeRenderings writes the HTML report (htmlOut: a file, a folder, or "auto"
// for report.html beside reportJSON; "" for none) and JUnit XML (junit: a
// file, or ""), each through a temporary file, and names what it wrote.
func writeRenderings(r *schema.Report, reportJSON, htmlOut, junit string, stderr io.Writer) error {
	if htmlOut != "" {
		dest := htmlPath(htmlOut, reportJSON)
		if err := writeFileWith(dest, func(w io.Writer) error {
			return html.Write(w, r, html.Options{RawBase: rawBase(dest, reportJSON)})
		}); err != nil {
			return err
		}
		wroteHTML(stderr, dest)
	}
	if junit != "" {
		if err := writeFileWith(junit, func(w io.Writer) error { return export.WriteJUnit(w, r) }); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", junit)
	}
	return nil
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return usageError{fmt.Errorf("-o %q: use table or json", o)}
	}
	return nil
}

// htmlPath resolves --html: "auto" (or a folder) means report.html beside
// the report.json, never the working directory by surprise.
func htmlPath(flag, reportJSON string) string {
	if flag == "auto" {
		return filepath.Join(filepath.Dir(reportJSON), "report.html")
	}
	if st, err := os.Stat(flag); err == nil && st.IsDir() {
		return filepath.Join(flag, "report.html")
	}
	return flag
}

// rawBase is the path from the HTML's folder to the run folder, so that
// links to raw outputs work wherever the HTML was written.
func rawBase(htmlFile, reportJSON string) string {
	from, err1 := filepath.Abs(filepath.Dir(htmlFile))
	to, err2 := filepath.Abs(filepath.Dir(reportJSON))
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(filepath.Dir(reportJSON))
	}
	rel, err := filepath.Rel(from, to)
	if err != nil {
		return filepath.ToSlash(to)
	}
	if rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// writeFileWith writes a file through a temporary one, so that a failed
// render leaves no half file behind.
func writeFileWith(path string, render func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rdmabench-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := render(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// wroteHTML says where an HTML page went and, from a binary built without
// ECharts, that it has no charts and why.
func wroteHTML(stderr io.Writer, path string) {
	if html.ChartsIncluded() {
		fmt.Fprintln(stderr, "wrote", path)
		return
	}
	fmt.Fprintf(stderr, "wrote %s (tables only: this rdmabench was built without ECharts; `make build` or a release binary draws the charts)\n", path)
}
