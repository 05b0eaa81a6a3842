package nixlnative

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// options are the probe's flags (rdmabench_nixl.py's), as the runner
// passes them to both sides; the native initiator runs nixlbench's loop
// (--as-nixlbench), so the flags that loop fixes are taken and checked.
type options struct {
	role, etcd, key, name, backend, op  string
	initiatorSeg, targetSeg, vramAlloc  string
	device                              int
	minBlock, maxBlock                  int64
	regions, blocks, iters, warmup, lbf int
	bufferSize                          int64
	backendParams                       [][2]string
	rendezvous, timeLimit               time.Duration
	noNotify                            bool
}

// nixlbenchUCXParams are the UCX backend's parameters as nixlbench makes
// it (nixl_worker.cpp): num_workers = --num_threads (1) + 1, num_threads =
// --progress_threads (0).
var nixlbenchUCXParams = [][2]string{{"num_workers", "2"}, {"num_threads", "0"}}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet(Program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.role, "role", "", "target (prefill: serves its regions) or initiator (decode: the timed loop)")
	fs.StringVar(&o.etcd, "etcd", "", "rdmabench's etcd client URL")
	fs.StringVar(&o.key, "key", "", "etcd key prefix of this pair")
	fs.StringVar(&o.name, "name", "rdmabench", "agent name prefix")
	fs.StringVar(&o.backend, "backend", "UCX", "NIXL backend")
	fs.StringVar(&o.op, "op", "READ", "READ or WRITE")
	fs.StringVar(&o.initiatorSeg, "initiator-seg", "DRAM", "DRAM or VRAM")
	fs.StringVar(&o.targetSeg, "target-seg", "DRAM", "DRAM or VRAM")
	fs.StringVar(&o.vramAlloc, "vram-alloc", "driver", "driver (cuMemAlloc, nixlbench's cudaMalloc): the native initiator's only way")
	fs.IntVar(&o.device, "device", 0, "this side's GPU (VRAM)")
	fs.Int64Var(&o.minBlock, "min-block", 65536, "smallest block (B)")
	fs.Int64Var(&o.maxBlock, "max-block", 16<<20, "largest block (B)")
	fs.IntVar(&o.regions, "regions", 1, "KV regions: layers x K/V")
	fs.IntVar(&o.blocks, "blocks", 1, "blocks per region in one request")
	fs.IntVar(&o.iters, "iters", 256, "timed requests per block size")
	fs.IntVar(&o.warmup, "warmup", 16, "warm-up requests per block size")
	fs.IntVar(&o.lbf, "large-block-factor", 16, "iterations divided by this over 1 MiB")
	fs.Int64Var(&o.bufferSize, "buffer-size", 0, "bytes each region is allocated with, at least (nixlbench's --total_buffer_size); default: the largest request's")
	fs.Func("backend-param", "KEY=VALUE of the backend's creation (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q: want KEY=VALUE", s)
		}
		o.backendParams = append(o.backendParams, [2]string{k, v})
		return nil
	})
	rendezvous := fs.Float64("rendezvous-timeout", 120, "seconds to wait for the target")
	limit := fs.Float64("time-limit", 600, "seconds the run may take")
	fs.BoolVar(&o.noNotify, "no-notify", false, "refused: nixlbench's loop sends a notification with every post")
	// Fixed by nixlbench's loop, which the native initiator always runs.
	for _, f := range []string{"as-nixlbench", "reuse-xfer", "no-progress-thread", "busy-poll", "native"} {
		fs.Bool(f, false, "implied: the native initiator runs nixlbench's loop")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.op, o.initiatorSeg, o.targetSeg = strings.ToUpper(o.op), strings.ToUpper(o.initiatorSeg), strings.ToUpper(o.targetSeg)
	switch {
	case o.role != "initiator" && o.role != "target":
		return nil, fmt.Errorf("--role must be target or initiator, not %q", o.role)
	case o.etcd == "" || o.key == "":
		return nil, fmt.Errorf("--etcd and --key are required")
	case o.op != "READ" && o.op != "WRITE":
		return nil, fmt.Errorf("--op must be READ or WRITE, not %q", o.op)
	case !seg(o.initiatorSeg) || !seg(o.targetSeg):
		return nil, fmt.Errorf("--initiator-seg and --target-seg must be DRAM or VRAM")
	case o.vramAlloc != "driver":
		return nil, fmt.Errorf("--vram-alloc %s: the native initiator allocates VRAM with the CUDA driver, as nixlbench; drop --native to time torch's allocator", o.vramAlloc)
	case o.noNotify:
		return nil, fmt.Errorf("--native runs nixlbench's loop, which sends a notification with every post: drop --no-notify")
	case o.minBlock <= 0 || o.maxBlock <= 0 || o.regions <= 0 || o.blocks <= 0 || o.iters <= 0 || o.lbf <= 0:
		return nil, fmt.Errorf("--min-block, --max-block, --regions, --blocks, --iters and --large-block-factor must be positive")
	case o.bufferSize < 0:
		return nil, fmt.Errorf("--buffer-size must be >= 0")
	case o.warmup < 0 || o.minBlock > o.maxBlock:
		return nil, fmt.Errorf("--warmup must be >= 0 and --min-block <= --max-block")
	case !(*rendezvous > 0 && *rendezvous < 1e9) || !(*limit > 0 && *limit < 1e9):
		return nil, fmt.Errorf("--rendezvous-timeout and --time-limit must be positive numbers of seconds")
	}
	o.rendezvous = time.Duration(*rendezvous * float64(time.Second))
	o.timeLimit = time.Duration(*limit * float64(time.Second))
	if strings.EqualFold(o.backend, "UCX") && len(o.backendParams) == 0 {
		o.backendParams = nixlbenchUCXParams
	}
	return o, nil
}

// regionBytes is each region's allocation: the largest request's
// blocks, or --buffer-size where that is more.
func (o *options) regionBytes() int64 { return max(o.maxBlock*int64(o.blocks), o.bufferSize) }

func seg(s string) bool { return s == "DRAM" || s == "VRAM" }

// iterations: nixlbench's rule, blocks over 1 MiB get iters ÷ the
// large-block factor, and so does the warm-up.
func (o *options) iterations(block int64) int {
	if block > 1<<20 {
		return max(1, o.iters/o.lbf)
	}
	return o.iters
}

func (o *options) warmups(block int64) int {
	if block > 1<<20 && o.warmup > 0 {
		return max(1, o.warmup/o.lbf)
	}
	return o.warmup
}
