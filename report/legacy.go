package report

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/parsers"
)

// SchemaVersionV1 is report.json before results carried their family and
// metric. Such files still load: upgrade fills both in the way v1 readers
// guessed them, once, so that no renderer guesses.
const SchemaVersionV1 = "rdmabench.io/report/v1"

// checkVersion accepts the current schema and the ones upgrade knows.
func checkVersion(path, version string) error {
	if version == SchemaVersion || version == SchemaVersionV1 {
		return nil
	}
	return fmt.Errorf("%s: schemaVersion %q, this rdmabench reads %q (and %q)", path, version, SchemaVersion, SchemaVersionV1)
}

// upgrade brings a loaded report to the current schema in memory.
func upgrade(r *Report) {
	if r.SchemaVersion != SchemaVersionV1 {
		return
	}
	for i := range r.Results {
		upgradeResult(&r.Results[i])
	}
	r.SchemaVersion = SchemaVersion
}

// upgradeResult fills a v1 result's family (from the tool's name) and
// metric (its stats' metric; else bus bandwidth where measured, else
// bandwidth, else latency, as v1's compare chose; else what the tool
// measures at all).
func upgradeResult(r *Result) {
	if r.Family == "" {
		r.Family = legacyFamily(r.Tool)
	}
	if r.Metric == "" {
		r.Metric = legacyMetric(r)
	}
	if r.Requires == "" {
		r.Requires = legacyRequires(r)
	}
}

// legacyRequires is the transport a result's test asked for, for reports
// written before Result.Requires existed (the recorded soft-RoCE run): the
// scenario's own default, TCP for iperf3 and for ucx_perftest whose UCX_TLS
// (its Backend) names only TCP and shared-memory transports; else unknown.
func legacyRequires(r *Result) string {
	switch r.Family {
	case parsers.FamilyIperf3:
		return "tcp"
	case parsers.FamilyUCXPerftest:
	default:
		return ""
	}
	if !tool.TransportsAreTCP(r.Backend) {
		return ""
	}
	return "tcp"
}

func legacyFamily(tool string) parsers.Family {
	if f, ok := parsers.FamilyOf(tool); ok {
		return f
	}
	if tool == "nccl" || strings.HasSuffix(tool, "_perf") {
		return parsers.FamilyNCCL
	}
	return ""
}

func legacyMetric(r *Result) parsers.Metric {
	for _, st := range r.Stats {
		if st.Metric != "" {
			return st.Metric
		}
	}
	for _, m := range []parsers.Metric{parsers.MetricBusBW, parsers.MetricBandwidth, parsers.MetricLatency} {
		for i := range r.Samples {
			if _, ok := parsers.Figure(m, &r.Samples[i]); ok {
				return m
			}
		}
	}
	// Nothing measured (skipped, failed): what the tool measures at all
	// (the tool table's metric; a program's, all_reduce_perf, by family).
	if m := tool.MetricOf(r.Tool, tool.Settings{}); m != "" {
		return m
	}
	if m := tool.FamilyMetric(r.Family); m != "" {
		return m
	}
	return parsers.MetricBandwidth
}
