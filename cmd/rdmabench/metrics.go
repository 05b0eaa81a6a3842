package main

import (
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/report/export"
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
