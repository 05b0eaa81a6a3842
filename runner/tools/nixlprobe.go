package tools

import (
	"cmp"

	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"

	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// nixlProbeSpec is the runner's part of the NIXL probe (cmd/rdmabench-nixl):
// the target (prefill, the test's to side) first, ready once its agent's
// metadata is in the run's etcd; then the initiator (decode, from), whose
// output holds the table.
var nixlProbeSpec = Spec{build: buildNixlProbe, work: nixlProbeWork, messages: nixlProbeMessages,
	etcd:   func(*scenarios.Test) bool { return true },
	probes: nixlProbeProbes}

// nixlProbeProbes: the image's python3 imports nixl; per backend under
// test, NIXL has its plugin (a missing UCCL plugin skips the UCCL legs);
// with a VRAM segment, it imports torch (a missing torch skips the VRAM
// tests only).
func nixlProbeProbes(t *scenarios.Test) []Probe {
	probes := []Probe{NixlProbeFindsNixl()}
	// --native: both sides in Go through NIXL's C API, VRAM from the CUDA
	// driver (no torch).
	native := slices.Contains(t.Args.Extra, "--native")
	if native {
		// Its sides run in rdmabench-nccl, the bundle's program that loads
		// libraries (rdmabench-nixl execs it from its own folder).
		probes = append(probes, BinaryProbe("rdmabench-nccl", installOf(tool.NixlProbe)), NixlProbeHasCAPI())
	} else if strings.EqualFold(t.Args.InitiatorSeg, "VRAM") || strings.EqualFold(t.Args.TargetSeg, "VRAM") {
		probes = append(probes, NixlProbeHasTorch())
	}
	backends := t.Args.Backends
	if len(backends) == 0 {
		backends = []string{cmp.Or(t.Args.Backend, scenarios.DefaultNixlBackend)}
	}
	for _, b := range backends {
		p := NixlProbeHasPlugin(b)
		p.Backend = strings.ToUpper(b)
		probes = append(probes, p)
	}
	return probes
}

// nixlFindScript is what the NIXL probe's preflight checks read: the
// probe's --find (its python3, NIXL's version and plugins, torch), or
// python=noprobe where the probe is not on PATH.
const nixlFindScript = `command -v rdmabench-nixl >/dev/null 2>&1 || { echo "python=noprobe"; exit 0; }; rdmabench-nixl --find`

// NixlProbeHasTorch is preflight's check that the image's python3 imports
// torch, which the probe's VRAM regions are made with (as vLLM's KV cache
// is; --vram-alloc driver too views the driver's memory through torch).
func NixlProbeHasTorch() Probe {
	return Probe{
		ID:     "nixl-probe-torch",
		Script: nixlFindScript,
		Judge: func(out string) (ProbeStatus, string, string) {
			switch py, torch := probeField(out, "python"), probeField(out, "torch"); {
			case py == "noprobe" || py == "notfound" || torch == "":
				return ProbeUnknown, "torch could not be looked for (see nixl-probe-finds-nixl)", ""
			case torch == "none":
				return ProbeFail, py + " cannot import torch: the probe's VRAM regions are torch tensors, as vLLM's KV cache",
					"use the serving image (vLLM's python3 has torch), set RDMABENCH_PYTHON to a python3 with torch, or test DRAM segments"
			default:
				return ProbePass, "torch " + torch + " with " + py, ""
			}
		},
	}
}

// NixlProbeHasCAPI is preflight's check for --native: the image's NIXL
// has its C API (libnixl_capi.so) beside the libnixl.so its python3 loads,
// or $RDMABENCH_NIXL_CAPI names one.
func NixlProbeHasCAPI() Probe {
	return Probe{
		ID:     "nixl-probe-capi",
		Script: nixlFindScript,
		Judge: func(out string) (ProbeStatus, string, string) {
			switch capi := probeField(out, "nixl-capi"); {
			case probeField(out, "nixl") == "" || probeField(out, "nixl") == "notfound" || capi == "":
				return ProbeUnknown, "NIXL's C API could not be looked for (see nixl-probe-finds-nixl)", ""
			case capi == "notfound":
				return ProbeFail, "NIXL " + probeField(out, "nixl-version") + " at " + probeField(out, "nixl") + " has no libnixl_capi.so beside its libnixl.so",
					"use a serving image with NIXL >= 1.0 (its install and wheels ship libnixl_capi.so), set RDMABENCH_NIXL_CAPI to the library, or drop --native"
			default:
				return ProbePass, "NIXL's C API at " + capi, ""
			}
		},
	}
}

// NixlProbeHasPlugin is preflight's check that the image's NIXL, as its
// python3 loads it, has a backend's plugin (rdmabench-nixl --find lists
// them).
func NixlProbeHasPlugin(backendName string) Probe {
	b := strings.ToUpper(backendName)
	return Probe{
		ID:     "nixl-probe-plugin-" + b,
		Script: nixlFindScript,
		Judge: func(out string) (ProbeStatus, string, string) {
			plugins := probeField(out, "plugins")
			switch {
			case probeField(out, "nixl") == "" || probeField(out, "nixl") == "notfound" || plugins == "" || strings.HasPrefix(plugins, "error:"):
				return ProbeUnknown, "NIXL's plugins could not be listed (see nixl-probe-finds-nixl)", ""
			case slices.Contains(strings.Split(plugins, ","), b):
				return ProbePass, "NIXL " + probeField(out, "nixl-version") + " has the " + b + " plugin", ""
			}
			return ProbeFail, "NIXL " + probeField(out, "nixl-version") + " at " + probeField(out, "nixl") + " has no " + b + " plugin (it has " + plugins + ")",
				"use a serving image whose NIXL was built with " + b + ", point NIXL_PLUGIN_DIR at a folder that has libplugin_" + b + ".so, or drop " + b + " from the test's backends"
		},
	}
}

// nixlProbeMessages is what the probe put on the wire for a row: its timed
// requests (iters, ÷ the large-block factor past 1 MiB, as nixlbench), its
// warm-up requests (divided too under --as-nixlbench) and the requests that
// checked its data (READ: one, the target's pattern read; WRITE: three,
// zeros written, the pattern written, then read back), each of batch
// descriptors.
func nixlProbeMessages(m *parsers.Measurement, s *parsers.Sample) int64 {
	iters, err1 := strconv.ParseInt(m.Info["num_iter"], 10, 64)
	warm, err2 := strconv.ParseInt(m.Info["warmup_iter"], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	if f, err := strconv.ParseInt(m.Info["large_blk_iter_ftr"], 10, 64); err == nil && f > 0 && s.Bytes > nixlLargeBlock {
		iters = max(1, iters/f)
		if m.Info["as_nixlbench"] == "nixlbench's" && warm > 0 {
			warm = max(1, warm/f) // --as-nixlbench: nixlbench's warm-up rule too
		}
	}
	if m.Info["check_consistency"] == "1" {
		warm++
		if strings.EqualFold(m.Op, "WRITE") {
			warm += 2
		}
	}
	return (iters + warm) * max(s.Batch, 1)
}

// NixlProbeKey is the etcd prefix of a leg's two agents: under the leg's
// group, whose keys the runner clears before and after the leg.
func NixlProbeKey(group string) string { return EtcdPrefix(NixlGroup(group)) + "nixl-probe" }

// DefaultNixlProbeMinBlock and DefaultNixlProbeMaxBlock are the probe's
// block sweep when a test gives none: vLLM's KV blocks are tens of KiB to
// a few MiB.
const (
	DefaultNixlProbeMinBlock = 64 << 10
	DefaultNixlProbeMaxBlock = 16 << 20
)

// buildNixlProbe: the two sides of one leg,
//
//	rdmabench-nixl --role target    --etcd ${etcd} --key KEY --backend B --op OP --initiator-seg S --target-seg S --min-block N --max-block M [--regions R --blocks K] [--iters I]
//	rdmabench-nixl --role initiator …the same
//
// with UCX's protocol tables (the transport evidence) as nixlbench gets them.
func buildNixlProbe(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	backendName := nixlBackend(leg)
	key := NixlProbeKey(leg.Group)
	target := Command{Endpoint: leg.Server.Name, Role: RoleTarget, Argv: nixlProbeArgv(spec, leg, "target", key, backendName),
		Env: nixlEnv(leg, leg.Server, backendName), Ready: ReadyEtcd + key + "/target"}
	initiator := Command{Endpoint: leg.Client.Name, Role: RoleInitiator, Argv: nixlProbeArgv(spec, leg, "initiator", key, backendName),
		Env: nixlEnv(leg, leg.Client, backendName), Parse: true}
	return append(dst, target, initiator), nil
}

func nixlProbeArgv(spec *Spec, leg *Leg, role, key, backendName string) []string {
	a := &leg.Test.Args
	minB, maxB := nixlProbeBlocks(leg)
	argv := []string{spec.Programs[0], "--role", role, "--etcd", PlaceholderEtcd, "--key", key, "--name", nixlSafe(leg.Group),
		"--backend", backendName, "--op", upperOr(a.Op, scenarios.DefaultNixlOp),
		"--initiator-seg", upperOr(a.InitiatorSeg, scenarios.DefaultNixlSeg), "--target-seg", upperOr(a.TargetSeg, scenarios.DefaultNixlSeg),
		"--min-block", leg.i64toa(minB), "--max-block", leg.i64toa(maxB)}
	if leg.Batch > 0 {
		// One request's KV: every region's blocks in one transfer.
		regions := max(leg.Regions, 1)
		argv = append(argv, "--regions", leg.itoa(regions), "--blocks", leg.itoa(max(leg.Batch/regions, 1)))
	}
	if a.Iterations > 0 {
		argv = append(argv, "--iters", leg.itoa(a.Iterations))
	}
	argv = append(argv, "--time-limit", strconv.Itoa(int(nixlProbeLimit(spec, leg).Seconds())))
	return append(argv, a.Extra...)
}

// nixlProbeLimit is how long the probe's sides may run: the work the table
// allows a sweep, or the test's own timeout where it gives more (a long
// sweep's), as the NCCL probe's.
func nixlProbeLimit(spec *Spec, leg *Leg) time.Duration {
	limit := nixlProbeWork(spec, leg.Test, leg.Size)
	if to := leg.Test.Timeout; to.IsSet() && to.Value > limit {
		limit = to.Value
	}
	return limit
}

func nixlProbeBlocks(leg *Leg) (int64, int64) {
	if leg.Size > 0 {
		return leg.Size, leg.Size
	}
	minB, maxB := SizeBytes(leg.Test.Args.MinSize), SizeBytes(leg.Test.Args.MaxSize)
	if minB <= 0 {
		minB = DefaultNixlProbeMinBlock
	}
	if maxB <= 0 {
		maxB = max(int64(DefaultNixlProbeMaxBlock), minB)
	}
	return minB, maxB
}

// nixlProbeWork bounds a leg: NIXL's start (UCX's transports, CUDA's
// context) and a few seconds a block size.
func nixlProbeWork(_ *Spec, t *scenarios.Test, size int64) time.Duration {
	steps := 1
	if size <= 0 {
		minB, maxB := SizeBytes(t.Args.MinSize), SizeBytes(t.Args.MaxSize)
		if minB <= 0 {
			minB = DefaultNixlProbeMinBlock
		}
		if maxB <= 0 {
			maxB = max(int64(DefaultNixlProbeMaxBlock), minB)
		}
		for b := minB; b <= maxB; b *= 2 {
			steps++
		}
	}
	return time.Minute + time.Duration(steps)*10*time.Second
}

// NixlProbeFindsNixl is preflight's check that the probe is there and that
// the image's python3 imports nixl (rdmabench-nixl --find: no GPU needed),
// with NIXL's version and plugins.
func NixlProbeFindsNixl() Probe {
	return Probe{
		ID:     "nixl-probe-finds-nixl",
		Script: nixlFindScript,
		Judge: func(out string) (ProbeStatus, string, string) {
			switch py, nx := probeField(out, "python"), probeField(out, "nixl"); {
			case py == "noprobe":
				return ProbeFail, "rdmabench-nixl is not on PATH", installOf(tool.NixlProbe)
			case py == "notfound":
				return ProbeFail, "no python3 (looked at: " + probeField(out, "looked") + ")",
					"use the serving image (its python3 holds NIXL's package), or set RDMABENCH_PYTHON in the pod's env"
			case nx == "notfound" || nx == "":
				return ProbeFail, py + " cannot import nixl: " + probeField(out, "nixl-error"),
					"use the serving image whose python3 has NIXL's package (pip install nixl), or set RDMABENCH_PYTHON to that python3"
			case strings.HasPrefix(probeField(out, "plugins"), "error:") || probeField(out, "plugins") == "":
				return ProbeFail, "NIXL " + probeField(out, "nixl-version") + " loads no plugin: " + probeField(out, "plugins"),
					"set NIXL_PLUGIN_DIR to the folder of NIXL's plugins (libplugin_UCX.so)"
			default:
				return ProbePass, "NIXL " + probeField(out, "nixl-version") + " at " + nx + " with " + py + ", plugins " + probeField(out, "plugins"), ""
			}
		},
	}
}
