package judge

import (
	"fmt"
	"slices"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
)

// checkAffinity fails a result whose GPU↔NIC pair is farther apart than
// expect.affinity accepts (a VF from the far socket moves about half the
// bandwidth); without pairs (no GPU, no matrix) it is not judged.
func checkAffinity(e scenarios.Expect, res *schema.Result, add func(string, bool, string)) {
	if e.Affinity == "" {
		return
	}
	rule := "affinity " + e.Affinity + " or nearer"
	if len(res.Affinity) == 0 {
		res.Reason = JoinReason(res.Reason, "affinity not judged: no GPU↔NIC pair known (no GPU, or no nvidia-smi topo -m listing the NIC)")
		add(rule+" (not judged)", true, "")
		return
	}
	limit := slices.Index(scenarios.AffinityRelations, e.Affinity)
	for _, a := range res.Affinity {
		if rank := slices.Index(scenarios.AffinityRelations, a.Relation); rank > limit {
			add(rule, false, fmt.Sprintf("%s: %s and %s are %s apart, want %s or nearer", a.Endpoint, a.GPU, a.Device, a.Relation, e.Affinity))
			return
		}
	}
	add(rule, true, "")
}
