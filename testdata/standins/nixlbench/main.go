// Command nixlbench is a stand-in for ai-dynamo/nixl's nixlbench, for
// machines without RDMA or GPUs. It takes the same command line (gflags),
// rendezvous through etcd with the same keys, lock, rank registration,
// barriers, messages and clean-up (or, with --runtime_type=ASIO, binds or
// connects to --asio_address:--asio_port as the real ASIO runtime does), and prints rank 0's output byte for byte
// like the real tool. The bytes move over its own TCP connection between
// the ranks, so the figures are measured, never made up. It announces
// itself on stderr only. See shared/reference/tools.md §3.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fmt.Fprintln(os.Stderr, "nixlbench: rdmabench stand-in (TCP data path, real etcd rendezvous)")
	f, err := parseFlags(args)
	if err != nil {
		if u, ok := err.(*usageExit); ok {
			fmt.Fprintln(os.Stderr, u.msg)
			return u.code
		}
		return 1
	}
	if err := validate(f); err != nil {
		fmt.Println(err)
		return 1
	}
	// As nixlbench's config loading: the runtime line, then the iteration
	// adjustments (the real ASIO capture prints them in this order).
	switch f.str("runtime_type") {
	case "ETCD":
		if f.str("etcd_endpoints") == "" {
			f["etcd_endpoints"] = "http://localhost:2379"
			fmt.Println("Using default ETCD endpoint for non-storage backend: http://localhost:2379")
		}
	case "ASIO":
		fmt.Printf("Using address %s port %s for ASIO runtime\n", f.str("asio_address"), f.str("asio_port"))
	default:
		fmt.Printf("Invalid runtime: %s\n", f.str("runtime_type"))
		return 1
	}
	adjustIters(f)
	b := &bench{f: f}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Println("Ctrl-C received, exiting...")
		b.abort()
		<-sigs
		os.Exit(1)
	}()
	return b.main()
}

func validate(f flags) error {
	switch f.str("op_type") {
	case "READ", "WRITE":
	default:
		return fmt.Errorf("Invalid op type: %s. Must be one of [READ, WRITE]", f.str("op_type"))
	}
	switch f.str("backend") {
	case "UCX", "LIBFABRIC", "GPUNETIO", "Mooncake", "UCCL":
	default:
		return fmt.Errorf("Unsupported NIXLBench backend: %s", f.str("backend"))
	}
	for _, k := range []string{"initiator_seg_type", "target_seg_type"} {
		if v := f.str(k); v != "DRAM" {
			if v == "VRAM" {
				return fmt.Errorf("VRAM not supported without CUDA, ROCm or Neuron")
			}
			return fmt.Errorf("Invalid segment type: %s", v)
		}
	}
	if f.num("max_block_size")*f.num("max_batch_size") > f.num("total_buffer_size")/max(1, f.num("num_initiator_dev")) {
		return fmt.Errorf("Incorrect buffer size configuration for Total(%d) < max_block(%d) * max_batch(%d)",
			f.num("total_buffer_size"), f.num("max_block_size"), f.num("max_batch_size"))
	}
	if f.num("num_initiator_dev") != 1 || f.num("num_target_dev") != 1 || f.num("num_threads") != 1 {
		return fmt.Errorf("stand-in: only 1 initiator, 1 target and 1 thread are implemented")
	}
	return nil
}

// adjustIters rounds num_iter and warmup_iter up to a multiple of
// num_threads × large_blk_iter_ftr, as nixlbench does (1000 → 1008).
func adjustIters(f flags) {
	threads := max(1, f.num("num_threads"))
	m := threads * max(1, f.num("large_blk_iter_ftr"))
	for _, k := range []struct{ flag, label string }{{"num_iter", "num_iter"}, {"warmup_iter", "warmup_iter"}} {
		v := f.num(k.flag)
		if v%m != 0 {
			v = (v/m + 1) * m
			f[k.flag] = fmt.Sprint(v)
			fmt.Printf("WARNING: Adjusting %s to %d to allow equal distribution to %d threads\n", k.label, v, threads)
		}
	}
}
