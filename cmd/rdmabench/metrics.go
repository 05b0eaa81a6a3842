package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/report/export"
	"github.com/rdmabench/rdmabench/report/push"
	"github.com/rdmabench/rdmabench/report/schema"
)

// writeMetricsFile writes r's OpenMetrics text to path ("" for none)
// through a temporary file in the same folder and a rename, so that
// node_exporter's textfile collector never reads half a file.
func writeMetricsFile(path string, r *schema.Report, stderr io.Writer) error {
	if path == "" {
		return nil
	}
	if err := writeFileWith(path, func(w io.Writer) error { return export.WriteOpenMetrics(w, r) }); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "wrote", path)
	return nil
}

// pushMetrics pushes r's OpenMetrics text to the Pushgateway at gateway, in
// the group of its scenario (job=SCENARIO; the run's id, hash and
// environment are labels of rdmabench_run_info), bounded by
// push.DefaultTimeout, and says so on stderr.
func pushMetrics(ctx context.Context, gateway string, r *schema.Report, stderr io.Writer) error {
	var body bytes.Buffer
	if err := export.WriteOpenMetrics(&body, r); err != nil {
		return err
	}
	return pushText(ctx, gateway, r.Run.Scenario, body.Bytes(), stderr)
}

// pushText PUTs an exposition text to the group job=JOB (and the grouping
// labels, name/value pairs) of the Pushgateway at gateway, and says so on
// stderr. A PUT replaces its group only: run's job=SCENARIO and compare's
// job=SCENARIO/command=compare are two groups, neither replacing the other.
func pushText(ctx context.Context, gateway, job string, body []byte, stderr io.Writer, labels ...string) error {
	u, err := push.GroupURL(gateway, job, labels...)
	if err != nil {
		return err
	}
	if err := push.Push(ctx, nil, u, body); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rdmabench: pushed %d series to %s\n", countSeries(string(body)), u)
	return nil
}

// countSeries counts the sample lines of an exposition text.
func countSeries(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			n++
		}
	}
	return n
}
