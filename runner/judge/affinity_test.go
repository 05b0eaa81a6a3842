package judge

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
)

// expect.affinity fails a result whose GPU↔NIC pair is farther apart than
// it accepts, naming the pair; a result without pairs is not judged on it.
func TestAffinityExpectation(t *testing.T) {
	test := &scenarios.Test{Expect: scenarios.Expect{Affinity: "PXB"}}
	outs := []Outcome{{OK: true, M: meas(bw(65536, 90e9))}}
	res := schema.Result{Affinity: []schema.Affinity{
		{Endpoint: "a-0", GPU: "GPU0", Device: "mlx5_0", Relation: "PIX"},
		{Endpoint: "b-0", GPU: "GPU2", Device: "mlx5_0", Relation: "SYS"}}}
	Fill(&res, test, nil, outs)
	if res.Verdict != schema.VerdictFail || !strings.Contains(res.Reason, "b-0: GPU2 and mlx5_0 are SYS apart, want PXB or nearer") {
		t.Errorf("verdict %s reason %q", res.Verdict, res.Reason)
	}
	res = schema.Result{Affinity: []schema.Affinity{{Endpoint: "a-0", GPU: "GPU1", Device: "mlx5_0", Relation: "PXB"}}}
	Fill(&res, test, nil, outs)
	if res.Verdict != schema.VerdictPass {
		t.Errorf("PXB within PXB: %s %q", res.Verdict, res.Reason)
	}
	res = schema.Result{}
	Fill(&res, test, nil, outs)
	if res.Verdict != schema.VerdictPass || !strings.Contains(res.Reason, "affinity not judged") {
		t.Errorf("no pairs: %s %q", res.Verdict, res.Reason)
	}
}
