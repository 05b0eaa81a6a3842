package schema

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/parsers"
)

// VersionV1 is report.json before results carried their family and
// metric. Such files still load: Upgrade fills both in the way v1 readers
// guessed them, once, so that no renderer guesses.
const VersionV1 = "rdmabench.io/report/v1"

// CheckVersion accepts the current schema and the ones Upgrade knows; the
// error names the file at path.
func CheckVersion(path, version string) error {
	if version == Version || version == VersionV1 {
		return nil
	}
	return fmt.Errorf("%s: schemaVersion %q, this rdmabench reads %q (and %q)", path, version, Version, VersionV1)
}

// Upgrade brings a loaded report to the current schema in memory.
func Upgrade(r *Report) {
	if r.SchemaVersion != VersionV1 {
		return
	}
	for i := range r.Results {
		UpgradeResult(&r.Results[i])
	}
	r.SchemaVersion = Version
}

// UpgradeResult fills a v1 result's family (from the tool's name) and
// metric (its stats' metric; else bus bandwidth where measured, else
// bandwidth, else latency, as v1's compare chose; else what the tool
// measures at all).
func UpgradeResult(r *Result) {
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
	// By family: these reports predate Requires, and only these two families wrote TCP runs then.
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
	// v1 reports named nccl-tests runs "nccl" or by a binary the table may not know.
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
	if m := tool.ProgramMetric(r.Tool, r.Family); m != "" {
		return m
	}
	return parsers.MetricBandwidth
}
