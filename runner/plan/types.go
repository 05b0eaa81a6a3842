// Package plan is the planner: it compiles a scenario into everything a run
// will do (endpoints, rounds of jobs, legs and their exact command lines)
// before anything is touched. It is pure: scenario in, plan out; no I/O and
// no backends, so `rdmabench plan` and `--dry-run` show exactly what runs.
package plan

import (
	"slices"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// Plan is everything a run will do, compiled before anything is touched.
//
// A compiled plan holds its endpoints and, per test, a schedule: its rounds
// are built one at a time as they are asked for (EachRound), so its memory
// grows with the endpoints, not with the legs (an all-to-all over N
// endpoints has N(N−1) of them). Rounds holds the rounds of a plan built by
// hand or read back from plan.json; they come before the compiled ones.
// Its JSON (WriteJSON, MarshalJSON) lists every round under "rounds".
type Plan struct {
	Scenario  string              `json:"scenario"`
	Backend   string              `json:"backend"`
	Endpoints []endpoint.Endpoint `json:"endpoints"`
	Rounds    []Round             `json:"-"`
	// Skipped lists tests that will not run here, with the reason
	// (e.g. an RDMA-only test on a host without RDMA devices).
	Skipped []SkippedTest `json:"skipped,omitempty"`
	// NeedsEtcd is true when a nixlbench job needs the embedded etcd.
	NeedsEtcd bool `json:"needsEtcd,omitempty"`
	// Samples are the sampled all-to-all tests: which rounds of their
	// matrix this plan takes, and what share of it that is.
	Samples []Sample `json:"samples,omitempty"`
	// Profile is "quick" when the scenario was cut to its quick profile
	// (rdmabench run --quick: scenarios.Quick); "" for the scenario as written.
	Profile string `json:"profile,omitempty"`

	tests []*testPlan // compiled tests in scenario order, their rounds built on demand
}

// SkippedTest is a test the planner or the runner will not run.
type SkippedTest struct {
	Test   string `json:"test"`
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Round is a set of jobs that run at the same time. Rounds run one after
// another; all rounds of one test are consecutive.
type Round struct {
	Index int    `json:"index"` // 0-based, across the whole plan
	Test  string `json:"test"`
	Jobs  []Job  `json:"jobs"`
}

// Job is one pairing of endpoints in a round. Its legs run one after the
// other (both directions of an all-to-all pair, each size or NIXL backend).
type Job struct {
	ID          string `json:"id"` // unique, stable: "write-bw/r3/decode-0->prefill-1", "a2a/r0/16-ranks-ep-0..ep-3"
	Test        string `json:"test"`
	Tool        string `json:"tool"`
	Pattern     string `json:"pattern,omitempty"`
	Round       int    `json:"round"`
	Repetitions int    `json:"repetitions"`
	// TimeoutSec bounds one leg (server start to client exit), derived
	// from the test's arguments plus start-up margin.
	TimeoutSec float64 `json:"timeoutSec"`
	Legs       []Leg   `json:"legs"`
}

// Endpoints lists the endpoints a job's commands run on, in order of first
// use: those preflight reads for the job, and those the runner checks
// before it runs.
func (j *Job) Endpoints() []string {
	var names []string
	for _, leg := range j.Legs {
		for _, pc := range leg.Commands {
			if !slices.Contains(names, pc.Endpoint) {
				names = append(names, pc.Endpoint)
			}
		}
	}
	return names
}

// Leg is one execution of the tool: one direction, one variant.
type Leg struct {
	// From is the client/initiator endpoint, To the server/target.
	// Multi-rank tools (nccl) list every rank in Ranks instead.
	From  string   `json:"from,omitempty"`
	To    string   `json:"to,omitempty"`
	Ranks []string `json:"ranks,omitempty"`
	// NRanks is the collective's rank count: the GPUs of its endpoints
	// summed (an endpoint without a GPU count drives one rank), so that two
	// GPUs on one endpoint read as 2 ranks, not 1.
	NRanks int `json:"nRanks,omitempty"`
	// Variant names what differs between legs of one job: a size
	// ("65536"), a NIXL backend ("UCCL"), or "" when there is one leg.
	Variant string `json:"variant,omitempty"`
	// Rail is the rail of multi-rail pods this leg measures (perftest):
	// 0 the data network, i each pod's i-th other network (endpoint.Rails).
	Rail int `json:"rail,omitempty"`
	// PeerRail, on a cross-rail leg (rping's args.crossRails), is the To
	// endpoint's rail, Rail being the From endpoint's: every rail to every
	// remote rail. nil on every other leg (both ends on Rail).
	PeerRail *int `json:"peerRail,omitempty"`
	// Backend is the transport backend of this leg (NIXL backend, UCX_TLS).
	Backend string `json:"backend,omitempty"`
	// RequestTokens is the prompt length whose KV this leg moves as one
	// request (nixlbench args.perRequest); 0 otherwise.
	RequestTokens int `json:"requestTokens,omitempty"`
	// NixlGroup is nixlbench's --benchmark_group for this leg,
	// "rdmabench-${run}-<job>-<leg>": unique in the run, so two legs of a
	// round never share an etcd prefix; the runner clears the keys under
	// tools.EtcdPrefix of it before and after the leg. "" for other tools.
	NixlGroup string `json:"nixlGroup,omitempty"`
	// Commands in start order: servers (or rank 0) first.
	Commands []PlannedCommand `json:"commands"`
}

// RailOn is the rail the leg uses on the named endpoint: the To
// endpoint's PeerRail on a cross-rail leg, else Rail.
func (l *Leg) RailOn(endpoint string) int {
	if l.PeerRail != nil && endpoint == l.To && endpoint != l.From {
		return *l.PeerRail
	}
	return l.Rail
}

// OnRails says whether any end of the leg is on a rail other than the
// data network's (rail 0).
func (l *Leg) OnRails() bool { return l.Rail > 0 || l.PeerRail != nil && *l.PeerRail > 0 }

// PlannedCommand is one process of a leg.
type PlannedCommand struct {
	Endpoint string            `json:"endpoint"`
	Role     string            `json:"role"`
	Argv     []string          `json:"argv"`
	Env      map[string]string `json:"env,omitempty"`
	// Port is the TCP port this side listens on (servers), for readiness.
	Port int `json:"port,omitempty"`
	// Ready says how the runner knows this side is ready for the next
	// command to start: one of the tool table's readiness signals
	// (tools.ReadyListen, ReadyLine+TEXT, ReadyEtcd+PREFIX, ReadyRetry), or
	// "" (no wait).
	Ready string `json:"ready,omitempty"`
	// Parse is true for the side whose output holds the result.
	Parse bool `json:"parse,omitempty"`
	// SSH, on an MPI launcher (nccl over several hosts), asks the runner
	// for a per-run key pair and sshd on every other rank's endpoint
	// before the command starts, removed when the leg ends.
	SSH *tools.SSHLaunch `json:"ssh,omitempty"`
}
