package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/units"
)

// renderParseTable prints one row per sample (one per failed run).
func renderParseTable(w io.Writer, files []parsedFile) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("FILE", "TOOL", "SIDE", "RESULT", "BYTES", "BW AVG", "BW PEAK", "MSG RATE", "LAT AVG us", "LAT P99 us", "NOTE")
	for _, f := range files {
		for _, m := range f.ms {
			for _, row := range measurementRows(displayName(f.name), m) {
				if err := t.Append(row); err != nil {
					return err
				}
			}
		}
	}
	return t.Render()
}

func measurementRows(file string, m parsers.Measurement) [][]string {
	result, note := "ok", ""
	if !m.OK {
		result, note = string(m.ErrorClass), m.Error
	}
	if m.Pings != nil {
		note = fmt.Sprintf("%d pings %s", *m.Pings, note)
	}
	if len(m.Samples) == 0 {
		return [][]string{{file, m.Tool, m.Side, result, "", "", "", "", "", "", note}}
	}
	rows := make([][]string, 0, len(m.Samples))
	for _, s := range m.Samples {
		rows = append(rows, []string{file, m.Tool, m.Side, result, strconv.FormatInt(s.Bytes, 10),
			rate(s.BWAvgBps), rate(s.BWPeakBps), num(s.MsgRatePPS, "%.0f/s"), num(s.LatAvgUS, "%.2f"),
			num(s.LatP99US, "%.2f"), note})
		note = ""
	}
	return rows
}

func rate(v *float64) string {
	if v == nil {
		return ""
	}
	return units.FormatRate(*v)
}

func num(v *float64, format string) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf(format, *v)
}
