package tools

import (
	"maps"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// ncclProbeSpec is the runner's part of the NCCL probe (cmd/rdmabench-nccl):
// one process per GPU of every rank's endpoint, rank 0 first; rank 0 puts
// NCCL's unique id in the run's etcd, which is its readiness, and the other
// ranks read it there. No launcher, no sshd.
var ncclProbeSpec = Spec{build: buildNCCLProbe, work: ncclWork,
	etcd:   func(*scenarios.Test) bool { return true },
	probes: func(*scenarios.Test) []Probe { return []Probe{NCCLProbeFindsNCCL()} }}

// NCCLProbeFindsNCCL is preflight's check that the probe is there and finds
// the image's NCCL as it will at run time (rdmabench-nccl --find: no GPU
// needed), with the version; a missing NCCL says where it looked.
func NCCLProbeFindsNCCL() Probe {
	return Probe{
		ID:     "nccl-probe-finds-nccl",
		Script: `command -v rdmabench-nccl >/dev/null 2>&1 || { echo "nccl=noprobe"; exit 0; }; rdmabench-nccl --find`,
		Judge: func(out string) (ProbeStatus, string, string) {
			switch v := probeField(out, "nccl"); v {
			case "noprobe":
				return ProbeFail, "rdmabench-nccl is not on PATH", installOf(tool.NCCLProbe)
			case "notfound":
				return ProbeFail, "no NCCL library: " + probeField(out, "nccl-error") + " (looked at: " + probeField(out, "looked") + ")",
					"use the serving image that holds NCCL (torch's nvidia-nccl wheel), or set VLLM_NCCL_SO_PATH in the pod's env to its libnccl.so.2"
			case "":
				return ProbeUnknown, "the probe printed nothing it knows: " + strings.TrimSpace(out), ""
			default:
				return ProbePass, "NCCL " + probeField(out, "nccl-version") + " at " + v + " (found by " + probeField(out, "nccl-found-by") + ")", ""
			}
		},
	}
}

// NCCLProbeKey is the etcd key of a leg's NCCL unique id: under the leg's
// group, whose keys the runner clears before and after the leg.
func NCCLProbeKey(group string) string { return EtcdPrefix(NixlGroup(group)) + "nccl-unique-id" }

// DefaultNCCLProbeWarmup is the probe's -w: warm-up collectives per size.
const DefaultNCCLProbeWarmup = 5

// buildNCCLProbe: every rank of the leg, rank 0 first, each
//
//	rdmabench-nccl --rank R --ranks N --device G --etcd ${etcd} --key KEY --collective C -b MIN -e MAX -f F [-n N] [-d T] -w 5 -c 1
//
// with NCCL's INIT and NET log (the transport evidence) and the rails'
// NCCL_IB_* settings, as nccl-tests gets them.
func buildNCCLProbe(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	ranks := leg.Ranks
	if len(ranks) == 0 {
		ranks = []endpoint.Endpoint{leg.Client}
	}
	total := 0
	for _, ep := range ranks {
		total += gpusOf(ep)
	}
	env := ncclDebugEnv(leg, ranks[0])
	if env == nil {
		env = map[string]string{}
	}
	ncclIBEnv(leg, ranks, env)
	key := NCCLProbeKey(leg.Group)
	rank := 0
	for _, ep := range ranks {
		for gpu := range gpusOf(ep) {
			c := Command{Endpoint: ep.Name, Role: RoleRank, Argv: ncclProbeArgv(spec, leg, rank, total, gpu, key), Env: withVisibleGPUs(leg, ep, rankUCX(leg, ep, gpu, env))}
			if rank == 0 {
				c.Ready, c.Parse = ReadyEtcd+key, true
			}
			dst = append(dst, c)
			rank++
		}
	}
	return dst, nil
}

func ncclProbeArgv(spec *Spec, leg *Leg, rank, ranks, gpu int, key string) []string {
	a := &leg.Test.Args
	argv := []string{spec.Programs[0], "--rank", leg.itoa(rank), "--ranks", leg.itoa(ranks), "--device", leg.itoa(gpu),
		"--etcd", PlaceholderEtcd, "--key", key, "--collective", collectiveOr(a.Collective)}
	// The sizes, step and iterations as nccl-tests takes them (ncclArgv).
	nt := ncclArgv(leg, 1)
	for i := 1; i+1 < len(nt); i += 2 {
		switch nt[i] {
		case "-b", "-e", "-f", "-n", "-d":
			argv = append(argv, nt[i], nt[i+1])
		}
	}
	argv = append(argv, "-w", leg.itoa(DefaultNCCLProbeWarmup), "-c", "1", "--time-limit", ncclProbeLimit(spec, leg))
	return append(argv, a.Extra...)
}

// ncclProbeLimit is the probe's own bound (its watchdog: NCCL's calls cannot
// be cancelled): the leg's timeout, or the test's where it sets one, and a
// minute more, so that the runner's kill comes first and the watchdog only
// catches a probe the runner lost.
func ncclProbeLimit(spec *Spec, leg *Leg) string {
	limit := StartupMargin + spec.work(spec, leg.Test, leg.Size) // LegTimeout, without the table's lookup
	if to := leg.Test.Timeout; to.IsSet() && to.Value > limit {
		limit = to.Value
	}
	return leg.itoa(int((limit + time.Minute).Seconds())) + "s"
}

func collectiveOr(c string) string {
	if c == "" {
		return DefaultNCCLCollective
	}
	return c
}

// rankUCX is a rank's copy of the leg's environment with, on a multi-rail
// pod, UCX_NET_DEVICES naming its GPU's nearest NIC (for NCCL over UCX,
// NCCL_NET=UCX; NCCL's own IB transport picks each GPU's nearest of
// NCCL_IB_HCA itself). Nothing where NCCL_IB_HCA is not set (TCP, gIB) or
// the scenario sets the variable.
func rankUCX(leg *Leg, ep endpoint.Endpoint, gpu int, env map[string]string) map[string]string {
	out := maps.Clone(env)
	if _, ib := env["NCCL_IB_HCA"]; ib && multiRail(ep) && !leg.scenarioSets(ep, "UCX_NET_DEVICES") {
		out["UCX_NET_DEVICES"] = leg.ucxDevices(ep, gpu)
	}
	return out
}
