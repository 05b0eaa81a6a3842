package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// gpuCopySpec is the runner's part of the GPU peer copy: one process on
// the test's from endpoint, whose GPU READs the to endpoint's; no
// rendezvous, no NCCL (preflight checks the program is there).
var gpuCopySpec = Spec{build: buildGPUCopy, work: ncclWork}

// buildGPUCopy: on the from endpoint (its own GPU first in its
// CUDA_VISIBLE_DEVICES, so --device 0),
//
//	rdmabench-nccl --collective copy --device 0 --peer-device P -b MIN -e MAX -f F [-n N] -w 5 -c 1 --time-limit T
//
// P being the to endpoint's GPU in the from endpoint's order (peerGPU).
func buildGPUCopy(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	if from, to := leg.Client.Host, leg.Server.Host; from != "" && to != "" && from != to {
		// No GPU of to is visible on from's host: the first past from's
		// own would be from's host's, timed as if it were the pair's.
		return dst, fmt.Errorf("gpu_copy %s -> %s: the endpoints are on two hosts (%s, %s); the copy reads a GPU of the same host: "+
			"give both pools the same host", leg.Client.Name, leg.Server.Name, from, to)
	}
	argv := []string{spec.Programs[0], "--collective", "copy", "--device", "0", "--peer-device", leg.itoa(peerGPU(leg.Client, leg.Server))}
	nt := ncclArgv(leg, 1) // the sizes, step and iterations as nccl-tests takes them
	for i := 1; i+1 < len(nt); i += 2 {
		switch nt[i] {
		case "-b", "-e", "-f", "-n":
			argv = append(argv, nt[i], nt[i+1])
		}
	}
	argv = append(argv, "-w", leg.itoa(DefaultNCCLProbeWarmup), "-c", "1", "--time-limit", ncclProbeLimit(spec, leg))
	argv = append(argv, leg.Test.Args.Extra...)
	c := Command{Endpoint: leg.Client.Name, Role: RoleInitiator, Argv: argv, Env: withVisibleGPUs(leg, leg.Client, nil), Parse: true}
	return append(dst, c), nil
}

// peerGPU is the ordinal, in from's CUDA_VISIBLE_DEVICES, of to's first
// GPU. The local backend gives endpoints that share a host each its own
// GPUs first, then the host's others (endpoint.VisibleGPUs: decode "1,0",
// prefill "0,1"), so prefill's GPU 0 is decode's ordinal 1. Where the
// planner gave no such order (endpoints on hosts or pods of their own), it
// is the first GPU past from's own, which the probe refuses, naming
// CUDA_VISIBLE_DEVICES, if the process cannot see it.
func peerGPU(from, to endpoint.Endpoint) int {
	if from.VisibleGPUs != "" && to.VisibleGPUs != "" {
		own, _, _ := strings.Cut(to.VisibleGPUs, ",")
		if i := slices.Index(strings.Split(from.VisibleGPUs, ","), own); i >= 0 {
			return i
		}
	}
	return gpusOf(from)
}
