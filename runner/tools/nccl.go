package tools

import (
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/runner/backend"
)

// nccl-tests defaults written explicitly into every command line.
const (
	DefaultNCCLCollective = "all_reduce"
	DefaultNCCLMinBytes   = 8
	DefaultNCCLMaxBytes   = 1 << 30
	DefaultNCCLStepFactor = 2
	// NCCLJSON is the JSON result file nccl-tests writes (-J) on rank 0.
	NCCLJSON = "${out}/nccl.json"
)

// NCCLBinary is the nccl-tests binary of a collective ("all_reduce" →
// "all_reduce_perf").
func NCCLBinary(collective string) string {
	if collective == "" {
		collective = DefaultNCCLCollective
	}
	return strings.TrimSuffix(collective, "_perf") + "_perf"
}

// buildNCCL: one command. On one endpoint it drives all of that
// endpoint's GPUs from one process:
//
//	all_reduce_perf -b MIN -e MAX -f 2 -g GPUS -c 1 -J ${out}/nccl.json
//
// Over several endpoints it is an Open MPI launcher on the first rank that
// starts one process per GPU on every endpoint (MPI=1 build of nccl-tests,
// sshd or an rsh agent reachable on every endpoint), forwarding the
// environment with -x:
//
//	mpirun --allow-run-as-root -np N×G --map-by slot -H ${addr:r0}:G,${addr:r1}:G,…
//	  -x NCCL_… all_reduce_perf -b MIN -e MAX -f 2 -g 1 -c 1 -J ${out}/nccl.json
//
// MPI rank 0 runs on the first host listed, the launcher's own endpoint, so
// the JSON file lands in its ${out}; the launcher's output is parsed.
func buildNCCL(leg *Leg) ([]Command, error) {
	ranks := leg.Ranks
	if len(ranks) == 0 {
		ranks = []backend.Endpoint{leg.Client}
	}
	first := ranks[0]
	env := ncclDebugEnv(leg, first)
	if len(ranks) == 1 {
		argv := ncclArgv(leg, gpusOf(first))
		return []Command{{Endpoint: first.Name, Role: RoleRank, Argv: argv, Env: env, Parse: true}}, nil
	}
	argv := mpirunArgv(leg, ranks, env)
	argv = append(argv, ncclArgv(leg, 1)...)
	return []Command{{Endpoint: first.Name, Role: RoleRank, Argv: argv, Env: env, Parse: true}}, nil
}

func gpusOf(ep backend.Endpoint) int {
	if ep.GPUs > 0 {
		return ep.GPUs
	}
	return 1
}

func ncclArgv(leg *Leg, gpus int) []string {
	a := &leg.Test.Args
	minB, maxB := SizeBytes(a.MinSize), SizeBytes(a.MaxSize)
	if leg.Size > 0 {
		minB, maxB = leg.Size, leg.Size
	}
	if minB <= 0 {
		minB = DefaultNCCLMinBytes
	}
	if maxB <= 0 {
		maxB = max(int64(DefaultNCCLMaxBytes), minB)
	}
	f := a.StepFactor
	if f <= 1 {
		f = DefaultNCCLStepFactor
	}
	argv := []string{NCCLBinary(a.Collective), "-b", leg.i64toa(minB), "-e", leg.i64toa(maxB),
		"-f", leg.itoa(f), "-g", leg.itoa(gpus)}
	if a.Iterations > 0 {
		argv = append(argv, "-n", leg.itoa(a.Iterations))
	}
	if a.DataType != "" {
		argv = append(argv, "-d", a.DataType)
	}
	argv = append(argv, "-c", "1", "-J", NCCLJSON)
	return append(argv, a.Extra...)
}

// mpirunArgv is the Open MPI launcher of ranks: one slot per GPU, endpoints
// that share an address (known at plan time for local and ssh endpoints)
// merged into one host entry (-H 127.0.0.1:2, not
// 127.0.0.1:1,127.0.0.1:1, which Open MPI counts as one node and refuses
// under -N 1), ranks placed by slot so that each host gets exactly its
// slots. The environment is forwarded with -x, names sorted.
func mpirunArgv(leg *Leg, ranks []backend.Endpoint, extra map[string]string) []string {
	var order []string
	slots := map[string]int{}
	total := 0
	for _, r := range ranks {
		a := r.Address // known when planned for local and ssh endpoints
		if a == "" {
			a = leg.addr(r.Name) // a pod's, once it runs
		}
		if _, seen := slots[a]; !seen {
			order = append(order, a)
		}
		slots[a] += gpusOf(r)
		total += gpusOf(r)
	}
	hosts := make([]string, len(order))
	for i, a := range order {
		hosts[i] = a + ":" + leg.itoa(slots[a])
	}
	argv := []string{"mpirun", "--allow-run-as-root", "-np", leg.itoa(total), "--map-by", "slot",
		"-H", strings.Join(hosts, ",")}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	if leg.EnvFor != nil {
		for k := range leg.EnvFor(ranks[0].Name) {
			if _, dup := extra[k]; !dup {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		argv = append(argv, "-x", k)
	}
	return argv
}
