package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/internal/term"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/units"
)

// renderParseTable prints one row per sample (one per failed run). Files
// of collectives (nccl-tests) get their own columns: bus bandwidth in GB/s.
func renderParseTable(w io.Writer, files []parsedFile) error {
	rowsOf := measurementRows
	header := []string{"FILE", "TOOL", "SIDE", "RESULT", "BYTES", "BW AVG", "BW PEAK", "MSG RATE", "LAT AVG us", "LAT P99 us", "TRANSPORT", "NOTE"}
	result := 3
	if allCollective(files) {
		rowsOf = collectiveRows
		header = []string{"FILE", "TOOL", "RESULT", "BYTES", "TIME us", "ALGBW", "BUSBW", "IN-PLACE BUSBW", "#WRONG", "TRANSPORT", "NOTE"}
		result = 2
	}
	t := term.NewTable(w, header...)
	color := term.Color(w)
	for _, f := range files {
		for _, m := range f.ms {
			for _, row := range rowsOf(displayName(f.name), m) {
				row = append(row[:len(row)-1], transportCell(m), row[len(row)-1])
				row[result] = term.Paint(color, row[result])
				t.Append(row...)
			}
		}
	}
	return t.Render()
}

// transportCell is what carried the data, as the output proves it:
// "rdma (rc_mlx5)", "p2p (P2P/direct pointer)"; blank without evidence.
func transportCell(m parsers.Measurement) string {
	if m.Transport == nil || m.Transport.Kind == "" {
		return ""
	}
	if m.Transport.Detail == "" || m.Transport.Detail == m.Transport.Kind {
		return m.Transport.Kind
	}
	return m.Transport.Kind + " (" + m.Transport.Detail + ")"
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

// allCollective reports whether every measurement comes from nccl-tests.
func allCollective(files []parsedFile) bool {
	n := 0
	for _, f := range files {
		for _, m := range f.ms {
			if fam, _ := parsers.FamilyOf(m.Tool); !tool.IsCollective(fam) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// collectiveRows is measurementRows for nccl-tests: time, algorithm and bus
// bandwidth (out-of-place, then in-place bus bandwidth) and wrong counts.
func collectiveRows(file string, m parsers.Measurement) [][]string {
	result, note := "ok", ""
	if !m.OK {
		result, note = string(m.ErrorClass), m.Error
	}
	if m.AvgBusBWBps != nil {
		note = strings.TrimSpace("avg busbw " + units.FormatByteRate(*m.AvgBusBWBps) + " " + note)
	}
	if len(m.Samples) == 0 {
		return [][]string{{file, m.Tool, result, "", "", "", "", "", "", note}}
	}
	rows := make([][]string, 0, len(m.Samples))
	for _, s := range m.Samples {
		wrong := ""
		if s.Wrong != nil {
			wrong = strconv.FormatInt(*s.Wrong, 10)
		}
		rows = append(rows, []string{file, m.Tool, result, strconv.FormatInt(s.Bytes, 10),
			num(s.TimeUS, "%.1f"), byteRate(s.AlgBWBps), byteRate(s.BusBWBps), byteRate(s.InplaceBusBWBps), wrong, note})
		note = ""
	}
	return rows
}

func byteRate(v *float64) string {
	if v == nil {
		return ""
	}
	return units.FormatByteRate(*v)
}
