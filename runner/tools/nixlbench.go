package tools

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// nixlbench defaults the planner writes explicitly so a plan reads the same
// whatever the nixlbench build's own defaults are.
const (
	DefaultNixlMinBlock = 4096
	DefaultNixlMaxBlock = scenarios.NixlDefaultMaxBlock
)

var installNixl = installOf(tool.Nixlbench)

// nixlStepCost is what nixlbench's etcd barriers and messages cost per
// (block, batch) step, beyond the transfer itself.
const nixlStepCost = 20 * time.Second

var nixlbenchSpec = Spec{
	etcd:  func(t *scenarios.Test) bool { return nixlRuntime(t) == scenarios.NixlRuntimeETCD },
	build: buildNixlbench, work: nixlWork, probes: nixlProbes, messages: nixlMessages, overSRD: nixlOverSRD}

// nixlOverSRD: only NIXL's LIBFABRIC backend drives EFA (libfabric's efa
// provider); on EKS the planner makes an unwritten backend LIBFABRIC.
func nixlOverSRD(t *scenarios.Test) string {
	backends := t.Args.Backends
	if len(backends) == 0 {
		backends = []string{t.Args.Backend}
	}
	for _, b := range backends {
		if !strings.EqualFold(b, "LIBFABRIC") {
			return "NIXL backend " + b + " does not drive EFA: use backend LIBFABRIC (libfabric's efa provider)"
		}
	}
	return ""
}

// buildNixlbench: both processes get the same command (gflags syntax);
// the role comes from the order of registration. The initiator (the test's
// from side, decode) starts first and is ready once it registered as rank 0
// (ETCD: "ETCD Runtime: Registered as rank 0"; ASIO: it listens on the
// port); then the target starts. With the ETCD runtime (the default)
// the first to take etcd's lock and register is rank 0; with the ASIO
// runtime (args.runtime: ASIO, for builds without etcd-cpp-apiv3) the first
// binds --asio_address:--asio_port, the initiator's data address and the
// job's port, and the second connects there. Rank 0 prints the table, so
// the initiator's output is parsed. The runtime is always named: a build
// without the ETCD runtime then says so instead of silently using another.
//
//	nixlbench --runtime_type=ETCD --etcd_endpoints=${etcd} --benchmark_group=rdmabench-${run}-GROUP
//	  --backend=B --op_type=OP --initiator_seg_type=S --target_seg_type=S
//	  --start_block_size=N --max_block_size=M [--max_batch_size=K] [--num_iter=I]
//	nixlbench --runtime_type=ASIO --asio_address=${addr:INITIATOR} --asio_port=PORT …
func buildNixlbench(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	backendName := nixlBackend(leg)
	argv := nixlArgv(leg, backendName, portOr(leg.Port, spec.DefaultPort))
	initiator := Command{Endpoint: leg.Client.Name, Role: RoleInitiator, Argv: argv,
		Env: nixlEnv(leg, leg.Client, backendName), Ready: ReadyNixlEtcdRank0, Parse: true}
	if nixlRuntime(leg.Test) == scenarios.NixlRuntimeASIO {
		// The ASIO runtime's first process binds the port before anything
		// else (any backend): the target may connect once it listens.
		initiator.Ready, initiator.Port = ReadyListen, portOr(leg.Port, spec.DefaultPort)
	}
	target := Command{Endpoint: leg.Server.Name, Role: RoleTarget, Argv: argv,
		Env: nixlEnv(leg, leg.Server, backendName)}
	return append(dst, initiator, target), nil
}

// DefaultNixlASIOPort is nixlbench's own --asio_port default; the planner
// counts up from it for the jobs of a round (ASIO runtime only).
const DefaultNixlASIOPort = 12345

// nixlRuntime is the test's nixlbench runtime (ETCD unless it says ASIO).
func nixlRuntime(t *scenarios.Test) string {
	if strings.EqualFold(t.Args.Runtime, scenarios.NixlRuntimeASIO) {
		return scenarios.NixlRuntimeASIO
	}
	return scenarios.NixlRuntimeETCD
}

// NeedsEtcd says whether a test rendezvous through the run's etcd
// (nixlbench with its ETCD runtime, the NCCL probe): its legs get a group
// of keys, cleared before and after each leg.
func NeedsEtcd(t *scenarios.Test) bool {
	spec, _ := Lookup(t.Tool)
	return spec.etcd != nil && spec.etcd(t)
}

// NixlGroup is the whole nixlbench --benchmark_group of a leg's group:
// every key the tool writes lives under xferbench/<group>/ (EtcdPrefix).
func NixlGroup(group string) string { return "rdmabench-" + PlaceholderRun + "-" + nixlSafe(group) }

// nixlSafe keeps a group name (made of test and endpoint names) clear of
// the words nixlbench refuses in any argument ("fromenv", "flagfile").
func nixlSafe(s string) string {
	for tool.NixlRefusedWord(s) != "" {
		s = strings.NewReplacer("fromenv", "from-env", "flagfile", "flag-file").Replace(s)
	}
	return s
}

// EtcdPrefix is the prefix of every key nixlbench writes for a group
// (the run's clean-up deletes it after each leg).
func EtcdPrefix(group string) string { return "xferbench/" + group + "/" }

func nixlBackend(leg *Leg) string {
	switch {
	case leg.Backend != "":
		return leg.Backend
	case leg.Test.Args.Backend != "":
		return leg.Test.Args.Backend
	}
	return scenarios.DefaultNixlBackend
}

func nixlArgv(leg *Leg, backendName string, port int) []string {
	a := &leg.Test.Args
	minB, maxB := nixlBlocks(leg)
	argv := []string{"nixlbench", "--runtime_type=" + nixlRuntime(leg.Test)}
	if nixlRuntime(leg.Test) == scenarios.NixlRuntimeETCD {
		argv = append(argv, "--etcd_endpoints="+PlaceholderEtcd, "--benchmark_group="+NixlGroup(leg.Group))
	} else {
		argv = append(argv, "--asio_address="+leg.addr(leg.Client.Name), "--asio_port="+leg.itoa(port))
	}
	if leg.Batch > 0 {
		return nixlRequestArgv(leg, argv, backendName)
	}
	argv = append(argv,
		"--backend="+backendName,
		"--op_type="+upperOr(a.Op, scenarios.DefaultNixlOp),
		"--initiator_seg_type="+upperOr(a.InitiatorSeg, scenarios.DefaultNixlSeg),
		"--target_seg_type="+upperOr(a.TargetSeg, scenarios.DefaultNixlSeg),
		"--start_block_size="+leg.i64toa(minB),
		"--max_block_size="+leg.i64toa(maxB),
	)
	argv = append(argv, progressThread(a, backendName)...)
	if a.MaxBatch > 0 {
		argv = append(argv, "--max_batch_size="+leg.itoa(a.MaxBatch))
	}
	if a.Iterations > 0 {
		argv = append(argv, "--num_iter="+leg.itoa(a.Iterations))
	}
	argv = append(argv, totalBuffer(a, maxB, a.MaxBatch)...)
	return append(argv, a.Extra...)
}

// totalBuffer is --total_buffer_size for blocks up to block in batches up
// to batch, unless extra sets it: without it nixlbench allocates and fills
// its 8 GiB default in every process (more than a pool's 4Gi).
func totalBuffer(a *scenarios.Args, block int64, batch int) []string {
	if _, i := scenarios.NixlExtraBuffer(a.Extra); i >= 0 {
		return nil
	}
	return []string{"--total_buffer_size=" + strconv.FormatInt(scenarios.NixlBufferBytes(block, batch, a.Extra), 10)}
}

// DefaultNixlRequestIters is how often a perRequest leg moves its request
// when the test gives no iterations: nixlbench rounds num_iter and
// warmup_iter up to its large-block factor (16) anyway.
const DefaultNixlRequestIters = 16

// nixlRequestArgv is one request's KV transfer: blocks of leg.Size, a batch
// of leg.Batch descriptors (one READ of the whole request, as vLLM's NIXL
// connector posts it), a buffer that holds exactly one request.
func nixlRequestArgv(leg *Leg, argv []string, backendName string) []string {
	a := &leg.Test.Args
	block, batch := leg.i64toa(leg.Size), leg.itoa(leg.Batch)
	iters := a.Iterations
	if iters <= 0 {
		iters = DefaultNixlRequestIters
	}
	argv = append(argv,
		"--backend="+backendName,
		"--op_type="+upperOr(a.Op, scenarios.DefaultNixlOp),
		"--initiator_seg_type="+upperOr(a.InitiatorSeg, scenarios.DefaultNixlSeg),
		"--target_seg_type="+upperOr(a.TargetSeg, scenarios.DefaultNixlSeg),
		"--start_block_size="+block, "--max_block_size="+block,
		"--start_batch_size="+batch, "--max_batch_size="+batch,
		"--num_iter="+leg.itoa(iters))
	if !slices.ContainsFunc(a.Extra, func(w string) bool { return strings.Contains(w, "warmup_iter") }) {
		argv = append(argv, "--warmup_iter="+leg.itoa(DefaultNixlRequestIters))
	}
	argv = append(argv, totalBuffer(a, leg.Size, leg.Batch)...)
	argv = append(argv, progressThread(a, backendName)...)
	return append(argv, a.Extra...)
}

// progressThread is --enable_pt for the LIBFABRIC backend (unless extra
// sets it): without a progress thread its target never accepts the
// initiator's connection over the tcp provider and the run hangs (seen
// with NIXL 8770b655a between the soft-RoCE VMs and network namespaces).
func progressThread(a *scenarios.Args, backendName string) []string {
	if !strings.EqualFold(backendName, "LIBFABRIC") || slices.ContainsFunc(a.Extra, func(w string) bool { return strings.Contains(w, "enable_pt") }) {
		return nil
	}
	return []string{"--enable_pt"}
}

// nixlBlocks is the block-size sweep: args.minSize…maxSize, or the leg's
// one size, or nixlbench's defaults.
func nixlBlocks(leg *Leg) (int64, int64) {
	if leg.Size > 0 {
		return leg.Size, leg.Size
	}
	minB, maxB := SizeBytes(leg.Test.Args.MinSize), SizeBytes(leg.Test.Args.MaxSize)
	if minB <= 0 {
		minB = DefaultNixlMinBlock
	}
	if maxB <= 0 {
		maxB = max(int64(DefaultNixlMaxBlock), minB)
	}
	return minB, maxB
}

// nixlEnv is what one side needs beyond the scenario's environment: for the
// UCX backend the transports and device (UCX_TLS, UCX_NET_DEVICES) and
// UCX_PROTO_INFO, whose protocol tables name the transport UCX really
// chose (the report's transport comes from them); for the other backends
// NIXL's INFO log, where the LIBFABRIC plugin names the provider it uses.
// A variable the scenario sets itself is left to it.
func nixlEnv(leg *Leg, ep endpoint.Endpoint, backendName string) map[string]string {
	var env map[string]string
	set := func(k, v string) {
		if leg.scenarioSets(ep, k) {
			return
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k] = v
	}
	if strings.EqualFold(backendName, "UCX") {
		env = ucxEnvOf(leg, &leg.Test.Args, ep, nixlGPU(leg, ep))
		set("UCX_PROTO_INFO", "y")
	} else {
		set("NIXL_LOG_LEVEL", "INFO")
	}
	return withVisibleGPUs(leg, ep, env)
}

// nixlGPU is the GPU a NIXL side drives: GPU 0 where its segment is VRAM
// (nixlbench and the probe put it there), none (-1) for DRAM.
func nixlGPU(leg *Leg, ep endpoint.Endpoint) int {
	seg := leg.Test.Args.TargetSeg
	if ep.Name == leg.Client.Name {
		seg = leg.Test.Args.InitiatorSeg
	}
	if strings.EqualFold(seg, "VRAM") {
		return 0
	}
	return -1
}

// withVisibleGPUs gives a command the endpoint's CUDA_VISIBLE_DEVICES
// where endpoints share one host's GPUs (endpoint.VisibleGPUs): nixlbench
// and the probes use GPU 0 of what they see, so each side drives its own
// GPU. The scenario's own setting wins.
func withVisibleGPUs(leg *Leg, ep endpoint.Endpoint, env map[string]string) map[string]string {
	if ep.VisibleGPUs == "" || leg.scenarioSets(ep, "CUDA_VISIBLE_DEVICES") {
		return env
	}
	if env == nil {
		env = map[string]string{}
	}
	env["CUDA_VISIBLE_DEVICES"] = ep.VisibleGPUs
	return env
}

func upperOr(s, def string) string {
	if s == "" {
		return def
	}
	return strings.ToUpper(s)
}

func nixlWork(_ *Spec, t *scenarios.Test, size int64) time.Duration {
	minB, maxB := nixlBlocks(&Leg{Test: t, Size: size})
	iters := t.Args.Iterations
	if iters <= 0 {
		iters = 1000
	}
	batches := steps(1, int64(max(t.Args.MaxBatch, 1)), 2)
	var bytes float64
	for b := minB; b <= maxB && b > 0; b *= 2 {
		n := float64(iters)
		if b > 1<<20 {
			n /= 16
		}
		bytes += float64(b) * n * float64(int64(1)<<(batches-1)) * 2
	}
	blocks := steps(minB, maxB, 2)
	return time.Duration(blocks*batches)*nixlStepCost + transfer(bytes)
}

// NixlEtcdProbe is the preflight check that the endpoint's nixlbench has
// its ETCD runtime. nixlbench compiles that runtime in only when
// etcd-cpp-apiv3 was found at build time (benchmark/nixlbench/meson.build,
// HAVE_ETCD); without it, --help still lists ETCD and every run fails with
// "Invalid runtime: ETCD". The runtime's own messages are in the binary
// only when it was built in, so the probe looks for one of them.
const NixlEtcdProbe = "nixlbench-etcd"

// nixlEtcdScript prints where nixlbench is and whether it carries the ETCD
// runtime's registration message (a script wrapper cannot be told).
const nixlEtcdScript = `p=$(command -v nixlbench) || { echo "nixlbench=missing"; exit 0; }
echo "nixlbench=$p"
if [ ! -r "$p" ]; then echo "etcd=unreadable"
elif head -c 2 "$p" 2>/dev/null | grep -q '#!'; then echo "etcd=script"
elif ! grep -aq 'NIXLBench Configuration' "$p" 2>/dev/null; then echo "etcd=notnixlbench"
elif grep -aq 'ETCD Runtime: Registered' "$p" 2>/dev/null; then echo "etcd=yes"
else echo "etcd=no"; fi`

// nixlProbes: the ETCD runtime where the test uses it; per backend under
// test its NIXL plugin and, for UCX, the transports the test needs (CUDA
// for GPU memory, verbs where it requires RDMA).
func nixlProbes(t *scenarios.Test) []Probe {
	var probes []Probe
	if nixlRuntime(t) == scenarios.NixlRuntimeETCD {
		probes = append(probes, Probe{ID: NixlEtcdProbe, Script: nixlEtcdScript, Judge: judgeNixlEtcd})
	}
	backends := t.Args.Backends
	if len(backends) == 0 {
		backends = []string{cmp.Or(t.Args.Backend, scenarios.DefaultNixlBackend)}
	}
	vram := strings.EqualFold(t.Args.InitiatorSeg, "VRAM") || strings.EqualFold(t.Args.TargetSeg, "VRAM")
	for _, b := range backends {
		b = strings.ToUpper(b)
		scoped := func(p Probe) Probe { p.Backend = b; return p }
		probes = append(probes, scoped(NixlPluginProbe(b)))
		if b != "UCX" {
			continue
		}
		if vram {
			probes = append(probes, scoped(UCXTransportProbe(UCXNeedsCUDA)))
		}
		// As NeedsRDMA says for nixlbench (not called: the table holds this).
		if t.Requires == scenarios.RequiresRDMA || t.Requires == "" && !tool.TransportsAreTCP(t.Args.Transports) {
			probes = append(probes, scoped(UCXTransportProbe(UCXNeedsRDMA)))
		}
	}
	return probes
}

func judgeNixlEtcd(out string) (ProbeStatus, string, string) {
	path := probeField(out, "nixlbench")
	switch probeField(out, "etcd") {
	case "yes":
		return ProbePass, path + " has the ETCD runtime", ""
	case "no":
		return ProbeFail, path + " was built without the ETCD runtime (no etcd-cpp-apiv3 at build time): every run would fail with \"Invalid runtime: ETCD\"",
			"use a nixlbench built with etcd-cpp-apiv3 (NIXL's nixlbench container has it), or set args.runtime: ASIO"
	case "script":
		return ProbeUnknown, path + " is a script: whether the nixlbench it runs has the ETCD runtime cannot be read", ""
	case "unreadable":
		return ProbeUnknown, path + " cannot be read: whether it has the ETCD runtime is unknown", ""
	case "notnixlbench":
		return ProbeFail, path + " is not nixlbench (it prints no NIXLBench Configuration)", installNixl
	}
	if path == "missing" {
		return ProbeFail, "nixlbench is not on PATH", installNixl
	}
	return ProbeUnknown, "the probe printed nothing it knows: " + strings.TrimSpace(out), ""
}

// nixlLargeBlock is nixlbench's LARGE_BLOCK_SIZE: above it both its
// iterations and its warm-up are divided by large_blk_iter_ftr.
const nixlLargeBlock = 1 << 20

// nixlMessages reads the iterations from nixlbench's configuration table
// (num_iter, warmup_iter, large_blk_iter_ftr, as it adjusted them): each
// iteration moves the sample's batch of blocks (nixl_worker.cpp transfer).
func nixlMessages(m *parsers.Measurement, s *parsers.Sample) int64 {
	iters, err1 := strconv.ParseInt(m.Info["num_iter"], 10, 64)
	warm, err2 := strconv.ParseInt(m.Info["warmup_iter"], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	if s.Bytes > nixlLargeBlock {
		if f, err := strconv.ParseInt(m.Info["large_blk_iter_ftr"], 10, 64); err == nil && f > 0 {
			iters, warm = iters/f, warm/f
		}
	}
	return (iters + warm) * max(s.Batch, 1)
}
