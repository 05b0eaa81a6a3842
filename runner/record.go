package runner

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// record appends a result to results.jsonl (fsynced) and to the report.
func (r *run) record(res schema.Result) {
	if res.Requires == "" {
		res.Requires = r.requires(res.Test, res.Tool)
	}
	if err := r.dir.appendResult(res); err != nil {
		res.Reason = judge.JoinReason(res.Reason, "not written to "+ResultsFile+": "+err.Error())
	}
	r.mu.Lock()
	r.results = append(r.results, res)
	r.mu.Unlock()
	r.progress.leg(res)
}

// newResult is a result carrying the leg's identity, and what its tool
// is (family and headline metric, from the tool table).
func (r *run) newResult(job *plan.Job, legIdx int) schema.Result {
	var leg plan.Leg
	if legIdx < len(job.Legs) {
		leg = job.Legs[legIdx]
	}
	family, metric := tools.Describe(r.tests[job.Test], job.Tool)
	affinity, note := r.legAffinity(leg)
	return schema.Result{
		JobID: job.ID, Leg: legIdx, Test: job.Test, Tool: job.Tool, Family: family, Metric: metric,
		Pattern: job.Pattern, Round: job.Round, Variant: leg.Variant, Backend: leg.Backend, RequestTokens: leg.RequestTokens, MoELayers: moeLayers(r.tests[job.Test], job.Tool),
		Rail: leg.Rail, PeerRail: leg.PeerRail,
		From: leg.From, To: leg.To, Ranks: leg.Ranks, NRanks: leg.NRanks, Affinity: affinity, Reason: note,
	}
}

// noteSharedMachine marks a result whose endpoints all ran on one machine
// (a node, an ssh host): its traffic did not cross the fabric, so it is
// not a fabric figure, whatever it measured. Pools that test each other
// are kept apart by anti-affinity unless the scenario lets them share
// (shareNodesWith), or the topology key is coarser than a node.
func (r *run) noteSharedMachine(res *schema.Result) {
	if machine := r.sharedMachine(res); machine != "" {
		res.SameMachine = machine
		res.Reason = judge.JoinReason(res.Reason, "every side ran on "+machine+": the traffic did not cross the fabric, not a fabric figure")
	} else if sharedMemory(res) {
		res.Reason = judge.JoinReason(res.Reason, "UCX moved the bytes through shared memory ("+res.Transport.Detail+
			"): both sides are processes of one host, whatever their nodes are called; not a fabric figure")
	} else if gpuPeers(res) {
		res.Reason = judge.JoinReason(res.Reason, "the bytes went GPU to GPU within one host ("+res.Transport.Detail+
			"): both sides' GPUs are in one host, whatever their nodes are called; not a fabric figure")
	}
}

// sharedMachine is the node (or ssh host) every side of res ran on; ""
// when they ran apart or it is unknown.
func (r *run) sharedMachine(res *schema.Result) string {
	names := res.Ranks
	if len(names) == 0 {
		names = []string{res.From, res.To}
	}
	machine := ""
	for _, name := range names {
		ep := r.endpoint(name)
		m := ep.Node
		if m == "" {
			m = ep.Host
		}
		if m == "" || machine != "" && m != machine {
			return ""
		}
		machine = m
	}
	if len(names) < 2 {
		return ""
	}
	return machine
}

// sharedMemory: the tool's own evidence says the two sides of a pair
// joined through shared memory (UCX's sysv, posix, cma, knem, xpmem).
func sharedMemory(res *schema.Result) bool {
	return res.Transport != nil && res.Transport.Kind == parsers.TransportShm && res.From != "" && res.To != "" && res.From != res.To
}

// gpuPeers: the tool's own evidence says the two sides of a pair moved
// the bytes GPU to GPU (UCX's cuda_ipc, rocm_ipc, ze_ipc), which only GPUs
// of one host can.
func gpuPeers(res *schema.Result) bool {
	return res.Transport != nil && res.Transport.Kind == parsers.TransportP2P && res.From != "" && res.To != "" && res.From != res.To
}

// legAffinity is the GPU↔NIC pairs of a leg's endpoints (what each found
// of its data NIC), and a note naming each pair SYS apart: across the
// sockets a VF moves about half the bandwidth, which a reader of the
// figure must know. A rail leg has none: the pairs are the data NIC's.
func (r *run) legAffinity(leg plan.Leg) ([]schema.Affinity, string) {
	if leg.OnRails() {
		return nil, ""
	}
	names := leg.Ranks
	if len(names) == 0 {
		names = []string{leg.From, leg.To}
	}
	var out []schema.Affinity
	var notes []string
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		for _, a := range r.endpoints[name].Affinity {
			out = append(out, schema.Affinity{Endpoint: name, GPU: a.GPU, Device: a.Device, Relation: a.Relation})
			if a.Relation == "SYS" {
				notes = append(notes, sysNote(name, a.GPU, a.Device, a.Nearest, a.NearestRelation))
			}
		}
	}
	return out, strings.Join(notes, "; ")
}

func sysNote(ep, gpu, dev, nearest, rel string) string {
	s := fmt.Sprintf("%s: %s and %s are SYS apart (across the CPU sockets: about half the bandwidth)", ep, gpu, dev)
	if nearest != "" {
		s += fmt.Sprintf(", the host's %s is %s to %s", nearest, rel, gpu)
	}
	return s
}

// moeLayers is what the EP budget multiplies a DeepEP result's layer by:
// the test's args.moeLayers, else DeepSeek-R1's; 0 for other tools.
func moeLayers(t *scenarios.Test, name string) int {
	if name != tool.DeepEPProbe {
		return 0
	}
	if t != nil && t.Args.MoELayers > 0 {
		return t.Args.MoELayers
	}
	return tool.DefaultDeepEPMoELayers
}
