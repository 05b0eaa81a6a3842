package tools

import (
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/scenarios"
)

// nixlbench defaults the planner writes explicitly so a plan reads the same
// whatever the nixlbench build's own defaults are.
const (
	DefaultNixlMinBlock = 4096
	DefaultNixlMaxBlock = 64 << 20
)

const installNixl = "use an image with NIXL and nixlbench built with its ETCD runtime (your serving image, or NIXL's own nixlbench container)"

// nixlStepCost is what nixlbench's etcd barriers and messages cost per
// (block, batch) step, beyond the transfer itself.
const nixlStepCost = 20 * time.Second

var nixlbenchSpec = Spec{Name: scenarios.ToolNixlbench, Family: parsers.FamilyNixlbench, Binaries: []string{"nixlbench"},
	NeedsRDMA: true, Parser: "nixlbench", Metric: parsers.MetricBandwidth, Image: ImageGPU, Install: installNixl, Directional: true, SelectsTransport: true,
	build: buildNixlbench, work: nixlWork, overSRD: nixlOverSRD}

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
// the role comes from the order of registration in etcd. The initiator (the
// test's from side, decode) starts first and is ready once it prints
// "rank 0, type initiator"; then the target starts. With the ASIO runtime
// (args.extra: --runtime_type=ASIO, a build without etcd) the first process
// binds --asio_address:--asio_port and so is rank 0 the same way. Rank 0 prints the table,
// so the initiator's output is parsed.
//
//	nixlbench --etcd_endpoints=${etcd} --benchmark_group=rdmabench-${run}-GROUP
//	  --backend=B --op_type=OP --initiator_seg_type=S --target_seg_type=S
//	  --start_block_size=N --max_block_size=M [--max_batch_size=K] [--num_iter=I]
func buildNixlbench(dst []Command, _ *Spec, leg *Leg) ([]Command, error) {
	backendName := nixlBackend(leg)
	argv := nixlArgv(leg, backendName)
	initiator := Command{Endpoint: leg.Client.Name, Role: RoleInitiator, Argv: argv,
		Env: nixlEnv(leg, leg.Client, backendName), Ready: ReadyNixlRank0, Parse: true}
	target := Command{Endpoint: leg.Server.Name, Role: RoleTarget, Argv: argv,
		Env: nixlEnv(leg, leg.Server, backendName)}
	return append(dst, initiator, target), nil
}

// NixlGroup is the whole nixlbench --benchmark_group of a leg's group:
// every key the tool writes lives under xferbench/<group>/ (EtcdPrefix).
func NixlGroup(group string) string { return "rdmabench-" + PlaceholderRun + "-" + group }

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

func nixlArgv(leg *Leg, backendName string) []string {
	a := &leg.Test.Args
	minB, maxB := nixlBlocks(leg)
	argv := []string{"nixlbench",
		"--etcd_endpoints=" + PlaceholderEtcd,
		"--benchmark_group=" + NixlGroup(leg.Group),
		"--backend=" + backendName,
		"--op_type=" + upperOr(a.Op, scenarios.DefaultNixlOp),
		"--initiator_seg_type=" + upperOr(a.InitiatorSeg, scenarios.DefaultNixlSeg),
		"--target_seg_type=" + upperOr(a.TargetSeg, scenarios.DefaultNixlSeg),
		"--start_block_size=" + leg.i64toa(minB),
		"--max_block_size=" + leg.i64toa(maxB),
	}
	if a.MaxBatch > 0 {
		argv = append(argv, "--max_batch_size="+leg.itoa(a.MaxBatch))
	}
	if a.Iterations > 0 {
		argv = append(argv, "--num_iter="+leg.itoa(a.Iterations))
	}
	return append(argv, a.Extra...)
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

// nixlEnv selects UCX transports and device for the UCX backend only.
func nixlEnv(leg *Leg, ep backend.Endpoint, backendName string) map[string]string {
	if !strings.EqualFold(backendName, "UCX") {
		return nil
	}
	return ucxEnv(leg, &leg.Test.Args, ep)
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
