package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Rail reachability verdicts: can every NIC of an endpoint reach every NIC
// of the others? DeepEP's internode kernels (NVSHMEM IBGDA) connect every
// GPU's NIC to every remote GPU's NIC; on a rail-only fabric they hang or
// fail at start (llm-d's wide-EP guide), where NCCL still runs rail to rail.
const (
	WideEPReady    = "WideEP-ready"     // every rail pair reached
	NotWideEPReady = "not WideEP-ready" // at least one rail pair blocked
	RailsUnjudged  = "not judged"       // a pair skipped, none blocked
)

// Rail pair statuses.
const (
	RailReached = "reached"
	RailBlocked = "blocked"
	RailSkipped = "skipped"
)

// RailReach is what one cross-rail test (rping's args.crossRails) found:
// whether every rail of every endpoint reaches every rail of the others,
// the pairs that do not, and the HCA settings that follow.
type RailReach struct {
	Test    string `json:"test"`
	Verdict string `json:"verdict"`
	// Rails is the most rails an endpoint of the test has.
	Rails int `json:"rails"`
	// Pairs is every rail pair tried, in the order run; Blocked those that
	// could not connect (or move their pings).
	Pairs   []RailPair `json:"pairs"`
	Blocked []RailPair `json:"blocked,omitempty"`
	// RailOnly: every same-rail pair reached and every cross-rail pair was
	// blocked — the fabric routes rail i only to rail i.
	RailOnly bool `json:"railOnly,omitempty"`
	// Findings say it in words, the verdict first.
	Findings []string `json:"findings"`
	// HCA are the settings to serve WideEP with on this fabric.
	HCA []HCASetting `json:"hca,omitempty"`
}

// RailPair is one NIC of one endpoint to one NIC of another.
type RailPair struct {
	From       string `json:"from"`
	FromRail   int    `json:"fromRail"`
	FromDevice string `json:"fromDevice,omitempty"`
	To         string `json:"to"`
	ToRail     int    `json:"toRail"`
	ToDevice   string `json:"toDevice,omitempty"`
	Status     string `json:"status"`
	// Reason is why a pair was blocked or skipped (the result's reason).
	Reason string `json:"reason,omitempty"`
}

// HCASetting is one environment variable of the serving pods and why.
type HCASetting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Why   string `json:"why"`
}

// Name is "vm2 rail0 (rxe0)", the from side of the pair.
func (p RailPair) Name() string {
	return railName(p.From, p.FromRail, p.FromDevice) + " → " + railName(p.To, p.ToRail, p.ToDevice)
}

func railName(ep string, rail int, dev string) string {
	s := ep + " rail" + strconv.Itoa(rail)
	if dev != "" {
		s += " (" + dev + ")"
	}
	return s
}

// BuildRailReach reads every cross-rail test of the results (those whose
// results carry peerRail), one RailReach per test, in the order first met.
func BuildRailReach(results []Result, endpoints []EndpointInfo) []RailReach {
	info := endpointIndex(endpoints)
	var out []RailReach
	idx := map[string]int{}
	for i := range results {
		r := &results[i]
		if r.PeerRail == nil || r.Retest != 0 || r.From == "" || r.To == "" {
			continue
		}
		j, ok := idx[r.Test]
		if !ok {
			j = len(out)
			idx[r.Test] = j
			out = append(out, RailReach{Test: r.Test})
		}
		out[j].Pairs = append(out[j].Pairs, railPair(r, info))
	}
	for i := range out {
		out[i].judge(info)
	}
	return out
}

// RailReachOf is the report's rail reachability: as saved, or read from
// its results (a report written before it was derived).
func RailReachOf(r *Report) []RailReach {
	if r.RailReach != nil {
		return r.RailReach
	}
	return BuildRailReach(r.Results, r.Endpoints)
}

func railPair(r *Result, info map[string]EndpointInfo) RailPair {
	p := RailPair{From: r.From, FromRail: r.Rail, FromDevice: railDevice(info[r.From], r.Rail),
		To: r.To, ToRail: *r.PeerRail, ToDevice: railDevice(info[r.To], *r.PeerRail)}
	switch r.Verdict {
	case VerdictPass:
		p.Status = RailReached
	case VerdictSkipped:
		p.Status, p.Reason = RailSkipped, r.Reason
	default:
		p.Status, p.Reason = RailBlocked, r.Reason
		if p.Reason == "" {
			p.Reason = r.Verdict
		}
	}
	return p
}

// railDevice is an endpoint's RDMA device on a rail ("" unknown).
func railDevice(e EndpointInfo, rail int) string {
	if rail < len(e.Rails) {
		return e.Rails[rail].Device
	}
	if rail == 0 {
		return e.Device
	}
	return ""
}

// judge gives the verdict, the findings and the settings from the pairs.
func (a *RailReach) judge(info map[string]EndpointInfo) {
	skipped, sameOK, cross := 0, true, 0
	crossBlocked := 0
	for _, p := range a.Pairs {
		a.Rails = max(a.Rails, p.FromRail+1, p.ToRail+1)
		switch p.Status {
		case RailBlocked:
			a.Blocked = append(a.Blocked, p)
		case RailSkipped:
			skipped++
		}
		if p.FromRail == p.ToRail {
			sameOK = sameOK && p.Status == RailReached
			continue
		}
		cross++
		if p.Status == RailBlocked {
			crossBlocked++
		}
	}
	a.RailOnly = cross > 0 && sameOK && crossBlocked == cross
	eps := a.endpointCount()
	switch {
	case len(a.Blocked) > 0:
		a.Verdict = NotWideEPReady
		a.Findings = append(a.Findings, fmt.Sprintf("%s: %d of %d rail pairs cannot reach each other: %s",
			NotWideEPReady, len(a.Blocked), len(a.Pairs), blockedNames(a.Blocked, 8)))
		if a.RailOnly {
			a.Findings = append(a.Findings, "rail-only fabric: each rail reaches only the same rail of the other endpoints; "+
				"NCCL runs on it (rail to rail), DeepEP's internode kernels do not (every GPU's NIC connects to every remote NIC)")
		} else {
			a.Findings = append(a.Findings, "DeepEP's internode and low-latency kernels connect every NIC to every remote NIC: "+
				"expect them to hang or fail at start until these pairs route")
		}
	case skipped > 0:
		a.Verdict = RailsUnjudged
		a.Findings = append(a.Findings, fmt.Sprintf("%s: %d of %d rail pairs skipped, none blocked", RailsUnjudged, skipped, len(a.Pairs)))
	default:
		a.Verdict = WideEPReady
		what := fmt.Sprintf("every rail reaches every remote rail (%d rail pairs, %d endpoints, %d rails each)", len(a.Pairs), eps, a.Rails)
		if a.Rails == 1 {
			what = fmt.Sprintf("one rail per endpoint, reached by every other (%d pairs): nothing to cross", len(a.Pairs))
		}
		a.Findings = append(a.Findings, WideEPReady+": "+what)
	}
	a.HCA = a.hcaSettings(info)
}

func (a *RailReach) endpointCount() int {
	var names []string
	for _, p := range a.Pairs {
		for _, n := range []string{p.From, p.To} {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return len(names)
}

// blockedNames lists up to n blocked pairs, "… and k more" after.
func blockedNames(ps []RailPair, n int) string {
	var names []string
	for i, p := range ps {
		if i == n {
			names = append(names, fmt.Sprintf("… and %d more", len(ps)-n))
			break
		}
		names = append(names, p.Name())
	}
	return strings.Join(names, "; ")
}

// fullRails are the largest set of rails found that reach each other
// any-to-any (every pair with both ends in it reached): from every rail,
// the rail in the most blocked pairs still inside is left out (the higher
// on a tie) until none is. Those NICs can carry DeepEP's traffic.
func (a *RailReach) fullRails() []int {
	in := make([]bool, a.Rails)
	for k := range in {
		in[k] = true
	}
	for {
		blocked := make([]int, a.Rails)
		worst := -1
		for _, p := range a.Pairs {
			if p.Status == RailReached || !in[p.FromRail] || !in[p.ToRail] {
				continue
			}
			blocked[p.FromRail]++
			if p.ToRail != p.FromRail {
				blocked[p.ToRail]++
			}
		}
		for k, n := range blocked {
			if n > 0 && (worst < 0 || n >= blocked[worst]) {
				worst = k
			}
		}
		if worst < 0 {
			break
		}
		in[worst] = false
	}
	var out []int
	for k, ok := range in {
		if ok {
			out = append(out, k)
		}
	}
	return out
}

// hcas are the rails' devices as NCCL and NVSHMEM name them ("mlx5_0:1"),
// by rail index, from the first endpoint of the pairs that knows them.
func (a *RailReach) hcas(info map[string]EndpointInfo) []string {
	out := make([]string, a.Rails)
	for k := range out {
		for _, p := range a.Pairs {
			if e := info[p.From]; out[k] == "" && railDevice(e, k) != "" {
				out[k] = railDevice(e, k) + ":" + strconv.Itoa(max(railPort(e, k), 1))
			}
		}
	}
	return out
}

func railPort(e EndpointInfo, rail int) int {
	if rail < len(e.Rails) {
		return e.Rails[rail].Port
	}
	return e.Port
}

// hcaSettings: every rail to NCCL (NCCL_CROSS_NIC by the verdict), the
// rails that reach every remote rail to NVSHMEM and DeepEP.
func (a *RailReach) hcaSettings(info map[string]EndpointInfo) []HCASetting {
	if a.Verdict == RailsUnjudged {
		return nil
	}
	hcas := a.hcas(info)
	if slices.Contains(hcas, "") {
		return nil // a rail's device is unknown: nothing to name
	}
	var full []string
	for _, k := range a.fullRails() {
		full = append(full, hcas[k])
	}
	out := []HCASetting{{Name: "NCCL_IB_HCA", Value: "=" + strings.Join(hcas, ","), Why: "every rail, by exact name"}}
	if a.Verdict == WideEPReady {
		out = append(out, HCASetting{Name: "NCCL_CROSS_NIC", Value: "1", Why: "any NIC reaches any remote NIC"})
	} else {
		out = append(out, HCASetting{Name: "NCCL_CROSS_NIC", Value: "0", Why: "keep each NCCL ring and tree on one rail: the rails do not all reach each other"})
	}
	if len(full) == 0 {
		why := "no rail reaches the others any-to-any: DeepEP's internode kernels cannot run here until the fabric routes between rails"
		return append(out, HCASetting{Name: "NVSHMEM_HCA_LIST", Value: "", Why: why},
			HCASetting{Name: "DEEP_EP_DEVICE_TO_HCA_MAPPING", Value: "", Why: why})
	}
	why := "every rail reaches every remote rail"
	if len(full) < len(hcas) {
		why = "only the rails that reach each other any-to-any (" + strings.Join(full, ", ") +
			"), until the blocked pairs route: fewer NICs, less bandwidth, but no hang"
	}
	mapping, how := a.deepEPMapping(info, full)
	return append(out, HCASetting{Name: "NVSHMEM_HCA_LIST", Value: strings.Join(full, ","), Why: why},
		HCASetting{Name: "DEEP_EP_DEVICE_TO_HCA_MAPPING", Value: strings.Join(mapping, ","), Why: why + "; " + how})
}

// deepEPMapping maps each GPU to an HCA of full (the rails that reach
// every remote rail, as "dev:port"): its nearest NIC where the first
// endpoint of the pairs with a GPU↔NIC affinity says which and that NIC
// is in full, else the g-th of full in index order; and says how.
func (a *RailReach) deepEPMapping(info map[string]EndpointInfo, full []string) ([]string, string) {
	byDevice := map[string]string{}
	for _, h := range full {
		byDevice[h[:strings.LastIndexByte(h, ':')]] = h
	}
	var aff []Affinity
	from := ""
	for _, p := range a.Pairs {
		for _, name := range []string{p.From, p.To} {
			if aff == nil && len(info[name].Affinity) > 0 {
				aff, from = info[name].Affinity, name
			}
		}
	}
	if aff == nil {
		mapping := make([]string, len(full))
		for g, h := range full {
			mapping[g] = strconv.Itoa(g) + ":" + h
		}
		return mapping, "GPU i to the i-th, in index order: no endpoint's GPU↔NIC affinity was read (nvidia-smi topo -m in the pods); where a GPU's nearest NIC differs, map it to that one"
	}
	var mapping, fallback []string
	for g, p := range aff {
		h, near := byDevice[p.Device]
		if !near {
			h = full[g%len(full)]
			fallback = append(fallback, fmt.Sprintf("%s's nearest NIC, %s, does not reach every remote rail: index order for it", p.GPU, p.Device))
		}
		mapping = append(mapping, strings.TrimPrefix(p.GPU, "GPU")+":"+h)
	}
	how := "each GPU to its nearest NIC (" + from + "'s nvidia-smi topo -m)"
	if len(fallback) > 0 {
		how += "; " + strings.Join(fallback, "; ")
	}
	return mapping, how
}
