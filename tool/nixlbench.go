package tool

import (
	"fmt"
	"slices"
	"strings"
)

// Nixlbench is NIXL's benchmark: the KV-cache transfer of disaggregated
// serving.
const Nixlbench = "nixlbench"

// NixlBackends are the network backends nixlbench can drive (storage
// backends are not RDMA fabric tests).
var NixlBackends = []string{"UCX", "UCCL", "LIBFABRIC", "GPUNETIO", "Mooncake"}

// nixlbench runtimes (--runtime_type): ETCD (through the run's etcd) and
// ASIO (two processes, a TCP socket between them).
const (
	NixlRuntimeETCD = "ETCD"
	NixlRuntimeASIO = "ASIO"
)

// NixlRuntimes are nixlbench --runtime_type values.
var NixlRuntimes = []string{NixlRuntimeETCD, NixlRuntimeASIO}

// NixlOps are nixlbench --op_type values; NixlSegments its segment types.
var (
	NixlOps      = []string{"READ", "WRITE"}
	NixlSegments = []string{"DRAM", "VRAM"}
)

// nixlbench's defaults, written out so the report shows them.
const (
	DefaultNixlBackend = "UCX"
	DefaultNixlOp      = "WRITE" // nixlbench's own default
	// DefaultNixlRequestOp is a perRequest test's op: vLLM's NIXL
	// connector has decode pull the KV from prefill (a READ).
	DefaultNixlRequestOp = "READ"
	DefaultNixlSeg       = "DRAM"
)

var nixlbench = Spec{Name: Nixlbench, Family: FamilyNixlbench, Programs: []string{"nixlbench"}, Metric: MetricBandwidth,
	Args: []Arg{nixlBackend, nixlBackends, nixlRuntime, {Key: "perRequest", Kind: KindBool}, nixlOp,
		nixlSegment("initiatorSeg"), nixlSegment("targetSeg"), argMinSize, argMaxSize,
		{Key: "maxBatch", Kind: KindInt, Min: 1, Hint: "nixlbench --max_batch_size, 1 or more"},
		argIterations, argTransports, nixlExtra},
	ArgRules:  []Rule{nixlBackendsOnce, nixlBackendsNotEmpty, sizeRange, nixlPerRequest},
	Expect:    append(append([]string{}, bwExpect...), "maxLatency"),
	NeedsRDMA: true, SelectsTransport: true, DefaultPort: 12345, Directional: true, GPUMemoryOverRDMA: true, KVTransfer: true,
	BackendArg: "backend", EFABackend: "LIBFABRIC", waterfall: nixlLayer,
	Source: SourceServing, ImageFamily: "nixl",
	Install:     "use an image with NIXL and nixlbench built with its ETCD runtime (your serving image, or NIXL's own nixlbench container)",
	HostInstall: "build NIXL and nixlbench with its ETCD runtime (github.com/ai-dynamo/nixl: benchmark/nixlbench) and put nixlbench on PATH",
	gpu: func(a Settings) bool {
		return strings.EqualFold(a.InitiatorSeg, "VRAM") || strings.EqualFold(a.TargetSeg, "VRAM")
	}}

var (
	nixlBackend = Arg{Key: "backend", Kind: KindString, EmptyOK: true, OneOf: NixlBackends, What: "NIXL backends",
		Default: func(v Values) string {
			if len(v.Strings("backends")) > 0 {
				return ""
			}
			return DefaultNixlBackend
		}}
	nixlBackends = Arg{Key: "backends", Kind: KindStrings, OneOf: NixlBackends, What: "NIXL backends",
		Conflict: func(v Values) (string, string) {
			if v.Has("backend") {
				return "backend and backends exclude each other", "backend runs one NIXL backend, backends compares several; keep one of them"
			}
			return "", ""
		}}
	nixlRuntime = Arg{Key: "runtime", Kind: KindString, Always: true, OneOf: NixlRuntimes, What: "nixlbench runtimes",
		Default: fixed(NixlRuntimeETCD)}
	nixlOp = Arg{Key: "op", Kind: KindString, Always: true, OneOf: NixlOps, What: "NIXL ops",
		Default: func(v Values) string {
			if v.Bool("perRequest") {
				return DefaultNixlRequestOp
			}
			return DefaultNixlOp
		}}
	nixlExtra = Arg{Key: "extra", Kind: KindStrings, Hint: argExtra.Hint, Check: nixlOwnFlag}
)

func nixlSegment(key string) Arg {
	return Arg{Key: key, Kind: KindString, Always: true, OneOf: NixlSegments, What: "segment types", Default: fixed(DefaultNixlSeg)}
}

// nixlBackendsOnce: each backend of a comparison runs once.
func nixlBackendsOnce(v Values) []Problem {
	var out []Problem
	seen := map[string]bool{}
	for i, b := range v.Strings("backends") {
		if slices.Contains(NixlBackends, b) && seen[b] {
			out = append(out, Problem{Key: fmt.Sprintf("backends[%d]", i), Msg: fmt.Sprintf("backend %q is listed twice", b),
				Hint: "each backend runs once per test"})
		}
		seen[b] = true
	}
	return out
}

func nixlBackendsNotEmpty(v Values) []Problem {
	if !v.Has("backends") || len(v.Strings("backends")) > 0 {
		return nil
	}
	return []Problem{{Key: "backends", Msg: "backends is empty", Hint: "list at least one: backends: [UCX, UCCL]"}}
}

// nixlPerRequest: a perRequest test takes its transfer's shape from the
// serving section's KV layout, so it needs that section and no sizes.
func nixlPerRequest(v Values) []Problem {
	if !v.Bool("perRequest") || !v.Has("perRequest") {
		return nil
	}
	var out []Problem
	if !v.Serving {
		out = append(out, Problem{Key: "perRequest", Msg: "perRequest needs the scenario's serving section",
			Hint: "add a serving section (model: llama-3.1-70b, contextLengths: [8192]): its KV layout shapes the transfer"})
	}
	for _, k := range []string{"sizes", "minSize", "maxSize", "maxBatch"} {
		if v.Has(k) {
			out = append(out, Problem{Key: k, Msg: fmt.Sprintf("%s and perRequest exclude each other", k),
				Hint: "perRequest takes the block size and the descriptors per transfer from the serving section; remove " + k})
		}
	}
	return out
}

// nixlOwnedFlags are the nixlbench flags rdmabench sets on every command
// line: the run's etcd, and a group per leg whose keys it clears after the
// leg. Another value in extra would send the tool elsewhere or leave its
// keys behind.
var nixlOwnedFlags = []string{"etcd_endpoints", "benchmark_group", "runtime_type", "asio_address", "asio_port"}

// nixlbenchRefuses are the words nixlbench refuses anywhere in any
// argument, not only as flags (benchmark/nixlbench/src/utils/utils.cpp,
// parseConfig: "--fromenv is disabled for nixlbench").
var nixlbenchRefuses = []string{"flagfile", "fromenv"} // fromenv covers tryfromenv

// NixlRefusedWord is the word of nixlbenchRefuses that arg contains, or "".
func NixlRefusedWord(arg string) string {
	for _, w := range nixlbenchRefuses {
		if strings.Contains(arg, w) {
			return w
		}
	}
	return ""
}

// nixlOwnFlag refuses an extra word that nixlbench refuses or that sets a
// flag rdmabench owns (gflags spellings: --x=v, --x v, -x, dashes for
// underscores).
func nixlOwnFlag(x Value) (msg, hint string) {
	w := x.Text
	if bad := NixlRefusedWord(w); bad != "" {
		return fmt.Sprintf("%q contains %q", w, bad), "nixlbench refuses any argument containing " + bad + " (utils.cpp parseConfig: use its --config_file instead)"
	}
	name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
	flag := strings.ReplaceAll(name, "-", "_")
	if name == w || !slices.Contains(nixlOwnedFlags, flag) {
		return "", "" // not a flag, or not ours
	}
	hint = "rdmabench sets --" + flag + " itself (the run's etcd, a group per leg that it cleans up, the initiator's address); remove it from extra"
	if flag == "runtime_type" {
		hint = "write args.runtime: ETCD or ASIO instead"
	}
	return fmt.Sprintf("--%s cannot be set in extra", flag), hint
}
