package tools

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// deepEPProbeSpec is the runner's part of the DeepEP probe
// (cmd/rdmabench-deepep): one process per GPU of every rank's endpoint,
// rank 0 first, each given torch.distributed's env contract (MASTER_ADDR
// is rank 0's endpoint's data address, MASTER_PORT the leg's port). Rank 0
// hosts torch's TCP store on that port, which is its readiness, and prints
// every rank's results. No launcher, no sshd, no etcd.
var deepEPProbeSpec = Spec{build: buildDeepEPProbe, work: deepEPProbeWork,
	probes: func(*scenarios.Test) []Probe { return []Probe{DeepEPProbeFindsDeepEP()} }}

// DeepEPProbeFindsDeepEP is preflight's check that the probe is there and
// that the image's python3 imports torch and DeepEP V1 (rdmabench-deepep
// --find: no GPU needed), with their versions; V2 is named and refused.
func DeepEPProbeFindsDeepEP() Probe {
	return Probe{
		ID:     "deepep-probe-finds-deepep",
		Script: `command -v rdmabench-deepep >/dev/null 2>&1 || { echo "python=noprobe"; exit 0; }; rdmabench-deepep --find`,
		Judge:  judgeDeepEPFind,
	}
}

func judgeDeepEPFind(out string) (ProbeStatus, string, string) {
	py, de := probeField(out, "python"), probeField(out, "deep_ep")
	versions := "torch " + probeField(out, "torch") + " (CUDA " + probeField(out, "torch-cuda") + "), NCCL " + probeField(out, "nccl") +
		", NVSHMEM " + probeField(out, "nvshmem")
	switch {
	case py == "noprobe":
		return ProbeFail, "rdmabench-deepep is not on PATH", installOf(tool.DeepEPProbe)
	case py == "notfound":
		return ProbeFail, "no python3 (looked at: " + probeField(out, "looked") + ")",
			"use the serving image (its python3 holds torch and deep_ep), or set RDMABENCH_PYTHON in the pod's env"
	case probeField(out, "torch") == "notfound":
		return ProbeFail, py + " cannot import torch: " + probeField(out, "torch-error"),
			"use the serving image whose python3 has torch and DeepEP, or set RDMABENCH_PYTHON to that python3"
	case de == "notfound" || de == "":
		return ProbeFail, py + " cannot import deep_ep: " + cmp.Or(probeField(out, "deep_ep-error"), strings.TrimSpace(out)),
			"use an image with DeepEP V1 built against its torch and NVSHMEM (llm-d's wide-EP image), or set RDMABENCH_PYTHON"
	case probeField(out, "deep_ep-api") == "V2":
		return ProbeFail, "deep_ep " + probeField(out, "deep_ep-version") + " at " + de + " is DeepEP V2 (NCCL GIN); the probe drives V1's NVSHMEM Buffer, as vLLM's deepep_* backends do",
			"use an image with DeepEP V1 (NVSHMEM), as vLLM's deepep_high_throughput and deepep_low_latency load"
	case probeField(out, "deep_ep-api") != "V1":
		return ProbeFail, "deep_ep at " + de + " has no V1 Buffer with low_latency_dispatch", "use an image with DeepEP V1"
	}
	return ProbePass, "DeepEP V1 " + probeField(out, "deep_ep-version") + " at " + de + " with " + versions, ""
}

// buildDeepEPProbe: every rank of the leg, rank 0 first, each
//
//	[CUDA_VISIBLE_DEVICES=…] MASTER_ADDR=${addr:RANK0} MASTER_PORT=P RANK=R WORLD_SIZE=N LOCAL_RANK=G \
//	rdmabench-deepep --mode M --hidden H --topk K --experts E --tokens T --ll-tokens L --dtype D [--sms S] [--iterations I] --time-limit S
func buildDeepEPProbe(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	ranks := leg.Ranks
	if len(ranks) == 0 {
		ranks = []endpoint.Endpoint{leg.Client}
	}
	total := 0
	for _, ep := range ranks {
		total += gpusOf(ep)
	}
	if experts := cmp.Or(leg.Test.Args.Experts, tool.DefaultDeepEPExperts); experts%total != 0 {
		// Both kernel sets spread the experts evenly over the ranks; the
		// probe would refuse only after torch, NCCL and NVSHMEM started.
		return dst, fmt.Errorf("%d experts do not divide over the leg's %d rank(s) (one per GPU of %s): "+
			"set args.experts to a multiple of %d, or give the pools a GPU count that divides %d", experts, total, rankNames(ranks), total, experts)
	}
	port := cmp.Or(leg.Port, spec.DefaultPort)
	argv := deepEPProbeArgv(spec, leg)
	rank := 0
	for _, ep := range ranks {
		for gpu := range gpusOf(ep) {
			env := map[string]string{"MASTER_ADDR": leg.dataAddr(ranks[0].Name), "MASTER_PORT": leg.itoa(port),
				"RANK": leg.itoa(rank), "WORLD_SIZE": leg.itoa(total), "LOCAL_RANK": leg.itoa(gpu)}
			// LOCAL_RANK counts the endpoint's own GPUs: where endpoints
			// share the host's, each sees its own first (withVisibleGPUs).
			c := Command{Endpoint: ep.Name, Role: RoleRank, Argv: argv, Env: withVisibleGPUs(leg, ep, env)}
			if rank == 0 {
				// torch's TCP store listens on MASTER_PORT once rank 0 is up.
				c.Port, c.Ready, c.Parse = port, ReadyListen, true
			}
			dst = append(dst, c)
			rank++
		}
	}
	return dst, nil
}

func rankNames(ranks []endpoint.Endpoint) string {
	names := make([]string, len(ranks))
	for i, ep := range ranks {
		names[i] = ep.Name
	}
	return strings.Join(names, ", ")
}

func deepEPProbeArgv(spec *Spec, leg *Leg) []string {
	a := &leg.Test.Args
	or := func(v, def int) string { return leg.itoa(cmp.Or(v, def)) }
	argv := []string{spec.Programs[0], "--mode", cmp.Or(a.Mode, "both"),
		"--hidden", or(a.Hidden, tool.DefaultDeepEPHidden), "--topk", or(a.TopK, tool.DefaultDeepEPTopK),
		"--experts", or(a.Experts, tool.DefaultDeepEPExperts), "--tokens", or(a.Tokens, tool.DefaultDeepEPTokens),
		"--ll-tokens", or(a.LLTokens, tool.DefaultDeepEPLLTokens), "--dtype", cmp.Or(a.Dtype, "fp8")}
	if a.SMs > 0 {
		argv = append(argv, "--sms", leg.itoa(a.SMs))
	}
	if a.Iterations > 0 {
		argv = append(argv, "--iterations", leg.itoa(a.Iterations))
	}
	// The probe's own bound: the leg's work and a minute, so that the
	// runner's kill comes first and the watchdog only catches a lost probe.
	limit := StartupMargin + spec.work(spec, leg.Test, leg.Size) + time.Minute
	argv = append(argv, "--time-limit", leg.itoa(int(limit.Seconds())))
	return append(argv, a.Extra...)
}

// deepEPProbeWork bounds a leg: torch's and NCCL's start, NVSHMEM's
// initialisation (seconds, more where it tries IBGDA), the correctness
// checks (a few seconds of host-side tensor work a kernel set) and the
// timed calls (milliseconds each), per kernel set.
func deepEPProbeWork(_ *Spec, t *scenarios.Test, _ int64) time.Duration {
	sets := 2
	if t.Args.Mode == "normal" || t.Args.Mode == "low_latency" {
		sets = 1
	}
	return 30*time.Second + time.Duration(sets)*45*time.Second
}
