package runner

import (
	"bytes"
	"errors"
	"io"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// DefaultParse is the parser used when Config.Parse is nil: the parsers
// package, each side's measurements folded into one (parseWithParsers).
func DefaultParse(tool string, r io.Reader) (parsers.Measurement, error) {
	return parseWithParsers(tool, r)
}

// parseWithParsers reads a side's output with the parsers package and
// folds its measurements (one per table) into one: the first that
// succeeded, with the samples of the others that did; else the first. A
// part that failed (partFailed) beside those that succeeded is the result.
func parseWithParsers(tool string, r io.Reader) (parsers.Measurement, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return parsers.Measurement{}, err
	}
	ms, err := parsers.Parse(tool, bytes.NewReader(raw))
	if err != nil {
		return parsers.Measurement{}, err
	}
	addTransport(ms, raw)
	if len(ms) == 0 {
		return parsers.Measurement{Tool: tool, ErrorClass: parsers.ClassNoResults, Error: "the output holds no result"}, nil
	}
	first := -1
	for i := range ms {
		if ms[i].OK {
			if first < 0 {
				first = i
				continue
			}
			ms[first].Samples = append(ms[first].Samples, ms[i].Samples...)
		}
	}
	if first < 0 {
		return ms[0], nil
	}
	if f := partFailed(ms); f >= 0 {
		// A part of the run failed beside parts that measured (the DeepEP
		// probe's low-latency set after its normal set): the result is
		// that failure, not a pass on what happened to finish first.
		return ms[f], nil
	}
	return ms[first], nil
}

// partFailed is the index of the first measurement that says the run
// itself failed (wrong data, the tool's error, a timeout, output cut
// short…), or -1; a tool that could not time itself is not such a failure
// (it is run again), nor output of another format.
func partFailed(ms []parsers.Measurement) int {
	for i := range ms {
		switch ms[i].ErrorClass {
		case parsers.ClassDataError, parsers.ClassToolError, parsers.ClassTimeout, parsers.ClassConnectionFailed,
			parsers.ClassNoDevice, parsers.ClassLauncher, parsers.ClassTruncated:
			if !ms[i].OK {
				return i
			}
		}
	}
	return -1
}

// parserName is the name the parsers package knows a test's output by
// (nccl: the collective's binary); the job's tool when the test is unknown.
func parserName(t *scenarios.Test, tool string) string {
	if t != nil {
		return tools.ParserOf(t)
	}
	return tool
}

func (r *run) parse(tool string, rd io.Reader) (parsers.Measurement, error) {
	p := r.cfg.Parse
	if p == nil {
		p = DefaultParse
	}
	if p == nil {
		return parsers.Measurement{}, errors.New("no parser linked into this build")
	}
	return p(tool, rd)
}
