package tools

import (
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// NCCL debug settings the runner adds when the scenario sets no NCCL_DEBUG:
// INFO from the INIT and NET subsystems names the transport of every
// channel (P2P, SHM, NET/IB, NET/Socket) in a few dozen lines per rank,
// where plain INFO would add the tuning and proxy chatter too.
const (
	NCCLDebugLevel  = "INFO"
	NCCLDebugSubsys = "INIT,NET"
)

// OneHost says whether endpoints all run on one host: a single endpoint,
// any number under the local backend, or ssh endpoints that name the same
// host. Kubernetes pods are not placed yet when a plan is compiled, so
// several pods count as several hosts.
func OneHost(backendName string, eps []endpoint.Endpoint) bool {
	if len(eps) <= 1 || backendName == scenarios.BackendLocal {
		return true
	}
	if backendName != scenarios.BackendSSH {
		return false
	}
	for _, ep := range eps[1:] {
		if ep.Host == "" || ep.Host != eps[0].Host {
			return false
		}
	}
	return eps[0].Host != ""
}

// ncclDebugEnv is what a rank's command adds to its environment so that
// its output carries transport evidence; nil when the scenario already
// chose a debug level (its choice stands, evidence or not).
func ncclDebugEnv(leg *Leg, ep endpoint.Endpoint) map[string]string {
	if leg.EnvFor != nil {
		if _, set := leg.EnvFor(ep.Name)["NCCL_DEBUG"]; set {
			return nil
		}
	}
	return map[string]string{"NCCL_DEBUG": NCCLDebugLevel, "NCCL_DEBUG_SUBSYS": NCCLDebugSubsys}
}
