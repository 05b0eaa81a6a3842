package schema

import (
	"strings"
	"testing"
)

// twoRails are the soft-RoCE VMs as ssh hosts with two rails each.
func twoRails() []EndpointInfo {
	rails := []Rail{{Network: "dataAddress", Device: "rxe0", Port: 1}, {Network: "rails[0]", Device: "rxe1", Port: 1}}
	return []EndpointInfo{{Name: "vm1", Device: "rxe0", Rails: rails}, {Name: "vm2", Device: "rxe0", Rails: rails}}
}

// crossResults is a crossRails rping from vm2 to vm1, rail i to rail j,
// blocked where blocked names "ij".
func crossResults(blocked ...string) []Result {
	var out []Result
	for i := range 2 {
		for j := range 2 {
			peer := j
			r := Result{Test: "rails", Tool: "rping", From: "vm2", To: "vm1", Rail: i, PeerRail: &peer, Verdict: VerdictPass}
			for _, b := range blocked {
				if b == string(rune('0'+i))+string(rune('0'+j)) {
					r.Verdict, r.Reason = VerdictError, "rping: client exited 255 (RDMA_CM_EVENT_ADDR_ERROR)"
				}
			}
			out = append(out, r)
		}
	}
	// A rail-less result of another test is not read.
	return append(out, Result{Test: "write-bw", From: "vm2", To: "vm1", Verdict: VerdictError})
}

func settings(a RailReach) map[string]string {
	m := map[string]string{}
	for _, h := range a.HCA {
		m[h.Name] = h.Value
	}
	return m
}

func TestRailReachAnyToAny(t *testing.T) {
	got := BuildRailReach(crossResults(), twoRails())
	if len(got) != 1 {
		t.Fatalf("%d analyses, want 1 (only the cross-rail test)", len(got))
	}
	a := got[0]
	if a.Verdict != WideEPReady || len(a.Pairs) != 4 || len(a.Blocked) != 0 || a.RailOnly || a.Rails != 2 {
		t.Fatalf("%+v", a)
	}
	if !strings.Contains(a.Findings[0], "every rail reaches every remote rail (4 rail pairs, 2 endpoints, 2 rails each)") {
		t.Errorf("finding %q", a.Findings[0])
	}
	want := map[string]string{"NCCL_IB_HCA": "=rxe0:1,rxe1:1", "NCCL_CROSS_NIC": "1",
		"NVSHMEM_HCA_LIST": "rxe0:1,rxe1:1", "DEEP_EP_DEVICE_TO_HCA_MAPPING": "0:rxe0:1,1:rxe1:1"}
	if s := settings(a); !mapsEqual(s, want) {
		t.Errorf("settings %v, want %v", s, want)
	}
}

// A planted block of one pair (rail 0 to the remote rail 1) names that pair
// and keeps DeepEP off both rails it touches.
func TestRailReachOnePairBlocked(t *testing.T) {
	a := BuildRailReach(crossResults("01"), twoRails())[0]
	if a.Verdict != NotWideEPReady || a.RailOnly || len(a.Blocked) != 1 {
		t.Fatalf("%+v", a)
	}
	if n := a.Blocked[0].Name(); n != "vm2 rail0 (rxe0) → vm1 rail1 (rxe1)" {
		t.Errorf("blocked %q", n)
	}
	if !strings.Contains(a.Findings[0], "not WideEP-ready: 1 of 4 rail pairs cannot reach each other: vm2 rail0 (rxe0) → vm1 rail1 (rxe1)") {
		t.Errorf("finding %q", a.Findings[0])
	}
	s := settings(a)
	if s["NCCL_CROSS_NIC"] != "0" || s["NVSHMEM_HCA_LIST"] != "rxe0:1" || s["DEEP_EP_DEVICE_TO_HCA_MAPPING"] != "0:rxe0:1" || s["NCCL_IB_HCA"] != "=rxe0:1,rxe1:1" {
		t.Errorf("settings %v", s)
	}
}

// Every cross pair blocked, every same-rail pair reached: a rail-only
// fabric, said so.
func TestRailReachRailOnly(t *testing.T) {
	a := BuildRailReach(crossResults("01", "10"), twoRails())[0]
	if a.Verdict != NotWideEPReady || !a.RailOnly || len(a.Blocked) != 2 {
		t.Fatalf("%+v", a)
	}
	if !strings.HasPrefix(a.Findings[1], "rail-only fabric") {
		t.Errorf("findings %q", a.Findings)
	}
	if s := settings(a); s["NVSHMEM_HCA_LIST"] != "rxe0:1" {
		t.Errorf("settings %v: one rail still reaches every remote GPU", s)
	}
}

// Nothing reached: no rail for DeepEP, said so.
func TestRailReachNothingReached(t *testing.T) {
	a := BuildRailReach(crossResults("00", "01", "10", "11"), twoRails())[0]
	s := settings(a)
	if _, ok := s["NVSHMEM_HCA_LIST"]; !ok || s["NVSHMEM_HCA_LIST"] != "" || a.RailOnly {
		t.Errorf("%+v", a)
	}
}

// Three rails, rail 2 blocked from and to every other: rails 0 and 1 still
// carry DeepEP, and the settings name only them.
func TestRailReachPartialRails(t *testing.T) {
	eps := twoRails()
	for i := range eps {
		eps[i].Rails = append(eps[i].Rails, Rail{Network: "rails[1]", Device: "rxe2", Port: 1})
	}
	var res []Result
	for i := range 3 {
		for j := range 3 {
			peer := j
			r := Result{Test: "rails", From: "vm2", To: "vm1", Rail: i, PeerRail: &peer, Verdict: VerdictPass}
			if (i == 2) != (j == 2) {
				r.Verdict = VerdictError
			}
			res = append(res, r)
		}
	}
	a := BuildRailReach(res, eps)[0]
	s := settings(a)
	if a.Verdict != NotWideEPReady || s["NVSHMEM_HCA_LIST"] != "rxe0:1,rxe1:1" || s["DEEP_EP_DEVICE_TO_HCA_MAPPING"] != "0:rxe0:1,1:rxe1:1" ||
		s["NCCL_IB_HCA"] != "=rxe0:1,rxe1:1,rxe2:1" {
		t.Errorf("%s %v", a.Verdict, s)
	}
	if a.Blocked[0].Reason != "error" {
		t.Errorf("a blocked pair without a reason says its verdict: %q", a.Blocked[0].Reason)
	}
}

func TestRailReachSkippedIsNotJudged(t *testing.T) {
	res := crossResults()
	res[3].Verdict, res[3].Reason = VerdictSkipped, "endpoint vm1 has no RDMA device on rail 1"
	a := BuildRailReach(res, twoRails())[0]
	if a.Verdict != RailsUnjudged || a.HCA != nil {
		t.Errorf("%+v", a)
	}
}

func TestRailReachOneRail(t *testing.T) {
	zero := 0
	res := []Result{{Test: "rails", From: "a", To: "b", PeerRail: &zero, Verdict: VerdictPass},
		{Test: "rails", From: "b", To: "a", PeerRail: &zero, Verdict: VerdictPass}}
	a := BuildRailReach(res, []EndpointInfo{{Name: "a", Device: "mlx5_0"}, {Name: "b", Device: "mlx5_0"}})[0]
	if a.Verdict != WideEPReady || !strings.Contains(a.Findings[0], "nothing to cross") || settings(a)["NVSHMEM_HCA_LIST"] != "mlx5_0:1" {
		t.Errorf("%+v", a)
	}
}

// A report written before railReach was derived reads it from its results.
func TestRailReachOf(t *testing.T) {
	r := &Report{Results: crossResults("10"), Endpoints: twoRails()}
	if got := RailReachOf(r); len(got) != 1 || got[0].Verdict != NotWideEPReady {
		t.Errorf("%+v", got)
	}
	if BuildRailReach(nil, nil) != nil {
		t.Error("no cross-rail test: no analysis")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// why is the Why of the named setting.
func why(a RailReach, name string) string {
	for _, h := range a.HCA {
		if h.Name == name {
			return h.Why
		}
	}
	return ""
}

// DEEP_EP_DEVICE_TO_HCA_MAPPING maps each GPU to its nearest NIC where the
// endpoints' nvidia-smi topo -m was read (here GPU0 is nearest rxe1, GPU1
// rxe0: not in index order), and says so; a GPU whose nearest NIC does not
// reach every remote rail falls back to index order among those that do,
// named in the Why; without any affinity, index order, said so.
func TestDeepEPMappingByAffinity(t *testing.T) {
	eps := twoRails()
	for i := range eps {
		eps[i].Affinity = []Affinity{{Endpoint: eps[i].Name, GPU: "GPU0", Device: "rxe1", Relation: "PIX"},
			{Endpoint: eps[i].Name, GPU: "GPU1", Device: "rxe0", Relation: "PIX"}}
	}
	a := BuildRailReach(crossResults(), eps)[0]
	if s := settings(a); s["DEEP_EP_DEVICE_TO_HCA_MAPPING"] != "0:rxe1:1,1:rxe0:1" || s["NVSHMEM_HCA_LIST"] != "rxe0:1,rxe1:1" {
		t.Errorf("settings %v: want GPU0 on rxe1, GPU1 on rxe0", s)
	}
	if w := why(a, "DEEP_EP_DEVICE_TO_HCA_MAPPING"); !strings.Contains(w, "each GPU to its nearest NIC (vm2's nvidia-smi topo -m)") {
		t.Errorf("why %q", w)
	}

	// rail 1 blocked (0→1 and 1→1 … as in TestRailReachOnePairBlocked):
	// only rxe0 reaches every remote rail; GPU0's nearest (rxe1) does not.
	a = BuildRailReach(crossResults("01"), eps)[0]
	if s := settings(a); s["DEEP_EP_DEVICE_TO_HCA_MAPPING"] != "0:rxe0:1,1:rxe0:1" {
		t.Errorf("settings %v: want both GPUs on rxe0, the one rail that reaches every remote rail", s)
	}
	if w := why(a, "DEEP_EP_DEVICE_TO_HCA_MAPPING"); !strings.Contains(w, "GPU0's nearest NIC, rxe1, does not reach every remote rail: index order for it") {
		t.Errorf("why %q", w)
	}

	a = BuildRailReach(crossResults(), twoRails())[0]
	if w := why(a, "DEEP_EP_DEVICE_TO_HCA_MAPPING"); !strings.Contains(w, "GPU i to the i-th, in index order: no endpoint's GPU↔NIC affinity was read") {
		t.Errorf("without affinity, why %q", w)
	}
}
