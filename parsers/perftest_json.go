package parsers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// PerftestUnit is the bandwidth unit a perftest run reported in. The
// --out_json file does not say it: MiB/s unless --report_gbits was given.
type PerftestUnit int

// Units of perftest's BW_peak/BW_average.
const (
	PerftestMiB   PerftestUnit = iota // default (the text header says MB/sec or MiB/sec)
	PerftestGbits                     // --report_gbits
)

// ptJSONResults holds every key perftest can write under "results".
type ptJSONResults struct {
	MsgSize     *float64 `json:"MsgSize"`
	Iterations  *float64 `json:"n_iterations"`
	BWPeak      *float64 `json:"BW_peak"`
	BWAverage   *float64 `json:"BW_average"`
	MsgRate     *float64 `json:"MsgRate"`
	BWAvgOnly   *float64 `json:"bw_avg"`
	MsgRateOnly *float64 `json:"msgRate_avg"`
	TMin        *float64 `json:"t_min"`
	TMax        *float64 `json:"t_max"`
	TTypical    *float64 `json:"t_typical"`
	TAvg        *float64 `json:"t_avg"`
	TStdev      *float64 `json:"t_stdev"`
	P99         *float64 `json:"percentile_99"`
	P999        *float64 `json:"percentile_99.9"`
	TPS         *float64 `json:"tps_average"`
	AvgLat      *float64 `json:"avg_lat"`
}

// qosSL repairs the QoS variant, which writes `sl: 3` without quotes.
var qosSL = regexp.MustCompile(`(?m)^\s*sl: (-?\d+),`)

// ParsePerftestJSON reads a perftest --out_json file. perftest rewrites it
// for every size, so it holds only the last size of an -a sweep: one
// Measurement with one Sample. unit must match the run's --report_gbits.
func ParsePerftestJSON(r io.Reader, unit PerftestUnit) ([]Measurement, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading perftest JSON: %w", err)
	}
	data = qosSL.ReplaceAll(data, []byte(`"sl": $1,`))
	var doc struct {
		TestInfo map[string]any `json:"test_info"`
		Results  *ptJSONResults `json:"results"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &doc); err != nil {
		class := ClassUnknownFormat
		var se *json.SyntaxError
		if errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &se) && se.Offset >= int64(len(bytes.TrimSpace(data)))) {
			class = ClassTruncated
		}
		return []Measurement{failed("perftest", class, "perftest JSON: "+err.Error())}, nil
	}
	m := Measurement{Tool: "perftest", OK: true, Samples: []Sample{}, Info: map[string]string{}}
	for k, v := range doc.TestInfo {
		if k == "test" {
			m.Test = fmt.Sprint(v)
			continue
		}
		m.Info[infoKey(k)] = strings.TrimSpace(fmt.Sprint(v))
	}
	if m.Test != "" {
		m.Tool = ptToolFromTitle(ptJSONTitle(m.Test), ptLayout{})
	}
	scale := float64(mibPerSecBits)
	m.Info["bw_unit"] = "MiB/sec"
	if unit == PerftestGbits {
		scale = gbPerSecBits
		m.Info["bw_unit"] = "Gb/sec"
	}
	if doc.Results == nil {
		m.OK, m.ErrorClass, m.Error = false, ClassNoResults, "perftest JSON has no \"results\""
		return []Measurement{m}, nil
	}
	s := doc.Results.sample(scale)
	if !hasFigure(s) && s.Iterations > 0 {
		// As in the text output: iterations ran, but perftest had no clock
		// rate to time them (the JSON file has no room for the reason).
		m.OK, m.ErrorClass = false, ClassClock
		m.Samples = []Sample{{Bytes: s.Bytes, Iterations: s.Iterations}}
		m.Error = "perftest wrote no figures (0) for " + sizesText(m.Samples) + ": " + noClockReason("")
		return []Measurement{m}, nil
	}
	m.Samples = []Sample{s}
	return []Measurement{m}, nil
}

// ptJSONTitle turns "RDMA_Write_Bidirectional_BW_Test" back into the
// banner "RDMA_Write Bidirectional BW Test".
func ptJSONTitle(t string) string {
	for _, v := range ptVerbs {
		if rest, ok := strings.CutPrefix(t, v.prefix+"_"); ok {
			return v.prefix + " " + strings.ReplaceAll(rest, "_", " ")
		}
	}
	return strings.ReplaceAll(t, "_", " ")
}

func (r *ptJSONResults) sample(bwScale float64) Sample {
	var s Sample
	scaled := func(p *float64, k float64) *float64 {
		if p == nil {
			return nil
		}
		return F(*p * k)
	}
	if r.MsgSize != nil {
		s.Bytes = int64(*r.MsgSize)
	}
	if r.Iterations != nil {
		s.Iterations = int64(*r.Iterations)
	}
	s.BWAvgBps = scaled(r.BWAverage, bwScale)
	if s.BWAvgBps == nil {
		s.BWAvgBps = scaled(r.BWAvgOnly, bwScale)
	}
	if r.BWPeak != nil && *r.BWPeak != 0 {
		s.BWPeakBps = scaled(r.BWPeak, bwScale)
	}
	s.MsgRatePPS = scaled(r.MsgRate, 1e6)
	if s.MsgRatePPS == nil {
		s.MsgRatePPS = scaled(r.MsgRateOnly, 1e6)
	}
	if s.MsgRatePPS == nil {
		s.MsgRatePPS = r.TPS
	}
	s.LatMinUS, s.LatMaxUS, s.LatTypicalUS, s.LatStdevUS = r.TMin, r.TMax, r.TTypical, r.TStdev
	s.LatP99US, s.LatP999US = r.P99, r.P999
	s.LatAvgUS = r.TAvg
	if s.LatAvgUS == nil {
		s.LatAvgUS = r.AvgLat
	}
	return s
}
