package parsers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// iperf3JSON is the part of iperf3's -J document that a result needs.
type iperf3JSON struct {
	Start struct {
		Version            string          `json:"version"`
		ConnectingTo       json.RawMessage `json:"connecting_to"`
		AcceptedConnection json.RawMessage `json:"accepted_connection"`
		TestStart          iperf3Start     `json:"test_start"`
	} `json:"start"`
	End struct {
		SumSent     *iperf3Sum `json:"sum_sent"`
		SumReceived *iperf3Sum `json:"sum_received"`
		Sum         *iperf3Sum `json:"sum"` // UDP
	} `json:"end"`
	Error string `json:"error"`
}

type iperf3Start struct {
	Protocol   string  `json:"protocol"`
	NumStreams int     `json:"num_streams"`
	Blksize    int64   `json:"blksize"`
	Duration   float64 `json:"duration"`
	Reverse    int     `json:"reverse"`
}

type iperf3Sum struct {
	Seconds       float64  `json:"seconds"`
	Bytes         float64  `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *float64 `json:"retransmits"`
	JitterMS      *float64 `json:"jitter_ms"`
	LostPercent   *float64 `json:"lost_percent"`
}

// iperf3Errors classify iperf3's error text ("error" in -J, "iperf3: error - …").
var iperf3Errors = []signature{
	{"unable to connect", ClassConnectionFailed},
	{"Connection refused", ClassConnectionFailed},
	{"No route to host", ClassConnectionFailed},
	{"control socket has closed unexpectedly", ClassConnectionFailed},
	{"Connection reset", ClassConnectionFailed},
	{"timed out", ClassTimeout},
	{"timeout", ClassTimeout},
	{"parameter", ClassUsageError},
	{"usage", ClassUsageError},
}

// ParseIperf3 reads iperf3 output: the -J JSON document (one or several
// concatenated) or, failing that, the plain text summary. The figure is
// the receiver's bits per second (end.sum_received, or end.sum for UDP);
// the sender's rate, retransmits and stream count go to Info. An "error"
// field or line fails the run.
func ParseIperf3(r io.Reader) ([]Measurement, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading iperf3 output: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return parseIperf3JSON(trimmed), nil
	}
	return parseIperf3Text(data), nil
}

func parseIperf3JSON(data []byte) []Measurement {
	var out []Measurement
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var doc iperf3JSON
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			class := ClassUnknownFormat
			if errors.Is(err, io.ErrUnexpectedEOF) {
				class = ClassTruncated
			}
			out = append(out, failed("iperf3", class, "iperf3 JSON: "+err.Error()))
			break
		}
		out = append(out, iperf3Result(&doc))
	}
	if len(out) == 0 {
		out = append(out, failed("iperf3", ClassNoResults, "iperf3 printed no JSON document"))
	}
	return out
}

func iperf3Result(d *iperf3JSON) Measurement {
	m := Measurement{Tool: "iperf3", OK: true, Version: d.Start.Version, Samples: []Sample{}, Info: map[string]string{}}
	switch {
	case len(d.Start.AcceptedConnection) > 0:
		m.Side = "server"
	case len(d.Start.ConnectingTo) > 0:
		m.Side = "client"
	}
	ts := d.Start.TestStart
	if ts.Protocol != "" {
		m.Test = ts.Protocol
		m.Info["protocol"] = ts.Protocol
		m.Info["streams"] = strconv.Itoa(ts.NumStreams)
		m.Info["duration_s"] = fmtNum(ts.Duration)
		m.Info["reverse"] = strconv.Itoa(ts.Reverse)
	}
	recv := d.End.SumReceived
	if recv == nil {
		recv = d.End.Sum
	}
	// The server's sum_sent is all zeros ("sender": false): not a figure.
	if s := d.End.SumSent; s != nil && s.Bytes > 0 {
		m.Info["sender_bps"] = fmtNum(s.BitsPerSecond)
		if s.Retransmits != nil {
			m.Info["retransmits"] = fmtNum(*s.Retransmits)
		}
	}
	if recv != nil {
		m.Info["bytes_received"] = fmtNum(recv.Bytes)
		if recv.LostPercent != nil {
			m.Info["lost_percent"] = fmtNum(*recv.LostPercent)
		}
		if recv.JitterMS != nil {
			m.Info["jitter_ms"] = fmtNum(*recv.JitterMS)
		}
	}
	switch {
	case d.Error != "":
		m.OK, m.ErrorClass, m.Error = false, iperf3Class(d.Error), "iperf3: "+d.Error
	case recv == nil || recv.Seconds <= 0:
		m.OK, m.ErrorClass, m.Error = false, ClassTruncated, "iperf3 JSON has no end.sum_received: the test did not finish"
	}
	if recv != nil && recv.Seconds > 0 {
		if v, ok := finiteFloat(fmtNum(recv.BitsPerSecond)); ok {
			m.Samples = []Sample{{Bytes: ts.Blksize, BWAvgBps: F(v)}}
		}
	}
	if len(m.Info) == 0 {
		m.Info = nil
	}
	return m
}

func iperf3Class(msg string) ErrorClass {
	if s, ok := matchSignature(msg, iperf3Errors); ok {
		return s.class
	}
	return ClassToolError
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
