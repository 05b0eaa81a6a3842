package schema

import (
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
)

// A v1 result of a perftest program the tool table does not run
// (ib_atomic_lat), with nothing measured: c87395b's legacyMetric said
// latency (family perftest, name *_lat); MetricOf knows no such tool and
// FamilyMetric gives perftest's first tool's metric, bandwidth.
// tool.IsPerftestLatency exists for this and is unused.
func TestAudit29UpgradeV1AtomicLatIsLatency(t *testing.T) {
	r := Result{Tool: "ib_atomic_lat"}
	UpgradeResult(&r)
	if r.Family != parsers.FamilyPerftest || r.Metric != parsers.MetricLatency {
		t.Errorf("v1 ib_atomic_lat upgraded to %q %q, want %q %q (as at c87395b)", r.Family, r.Metric, parsers.FamilyPerftest, parsers.MetricLatency)
	}
}
