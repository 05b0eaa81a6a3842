// Command rdmabench-nccl is rdmabench's NCCL probe: one rank of a
// collective, run with the serving image's own NCCL (package probe/nccl).
// rdmabench starts one per GPU, in the pod's one container, and passes
// the ranks' rendezvous through its etcd; no MPI.
//
//	rdmabench-nccl --rank 0 --ranks 2 --device 0 --etcd http://10.0.0.5:2379 --key /rdmabench/RUN/nccl/JOB \
//	    --collective all_reduce -b 32M -e 4G -f 2 -n 20 -w 5
//
// The copy, the bottom of a one-host pair's waterfall, is one process and
// loads no NCCL: GPU 0 READs GPU 1 with the copy engines.
//
//	rdmabench-nccl --collective copy --device 0 --peer-device 1 -b 1M -e 1G -f 2
//
// It is also the NIXL probe's native initiator (package probe/nixlnative),
// which rdmabench-nixl --native starts: this is rdmabench's one program that
// loads the image's libraries, so the others stay static.
//
//	rdmabench-nccl nixl-initiator --role initiator --etcd ... (rdmabench-nixl's flags)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/probe/nccl"
	"github.com/rdmabench/rdmabench/probe/nixlnative"
	"github.com/rdmabench/rdmabench/units"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == nixlnative.Subcommand {
		os.Exit(nixlnative.Run(context.Background(), os.Args[2:], os.Stdout, os.Stderr))
	}
	if err := logToFile(); err != nil {
		fmt.Fprintln(os.Stderr, "rdmabench-nccl:", err)
		os.Exit(1)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// relayEnv names the file this process gave NCCL for its log.
const relayEnv = "RDMABENCH_NCCL_LOG"

// logToFile starts the probe again with NCCL_DEBUG_FILE set, when NCCL is
// asked to log and the caller named no file: NCCL reads its environment
// in C, which a Go program without cgo cannot change for itself. The
// probe copies the file's lines into its output (nccl.logRelay), so the
// evidence stays where it was and no NCCL line splits a table row.
func logToFile() error {
	if os.Getenv("NCCL_DEBUG") == "" || os.Getenv("NCCL_DEBUG_FILE") != "" {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("rdmabench-nccl-%d.log", os.Getpid()))
	env := append(os.Environ(), "NCCL_DEBUG_FILE="+path, relayEnv+"="+path)
	return syscall.Exec(self, os.Args, env) // same pid: the file name holds it
}

// run parses the flags and runs the rank; 2 is a usage error, 1 a failed
// run (the error on stderr, as the runner's error classes read it).
func run(args []string, stdout, stderr io.Writer) int {
	runtime.LockOSThread() // CUDA's current context belongs to this OS thread
	o, limit, find, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "rdmabench-nccl:", err)
		return 2
	}
	defer o.Log.Close(stdout)
	// NCCL's init and collectives block in C and cannot be cancelled: a
	// rank that never joins would hang the others for good, and a signal
	// would change nothing until NCCL returned. So both end the process
	// here, after the NCCL log's last lines are relayed and its file gone.
	exit := func(code int, why string) {
		fmt.Fprintf(stderr, "rdmabench-nccl: rank %d: %s\n", o.Rank, why)
		o.Log.Close(stdout)
		os.Exit(code)
	}
	watchdog := time.AfterFunc(limit, func() {
		exit(124, fmt.Sprintf("did not finish within --time-limit %s (a rank missing, or NCCL stuck)", limit))
	})
	defer watchdog.Stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if s, ok := (<-sigs).(syscall.Signal); ok {
			exit(128+int(s), "stopped by "+s.String())
		}
	}()
	if find {
		if err := nccl.ReportLibrary(context.Background(), o.NCCL, stdout); err != nil {
			fmt.Fprintln(stderr, "rdmabench-nccl:", err)
			return 1
		}
		return 0
	}
	if err := nccl.Run(context.Background(), o, stdout); err != nil {
		fmt.Fprintf(stderr, "rdmabench-nccl: rank %d: %v\n", o.Rank, err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (o nccl.Options, limit time.Duration, find bool, err error) {
	fs := flag.NewFlagSet("rdmabench-nccl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o = nccl.Options{Rendezvous: &nccl.Rendezvous{}}
	var minB, maxB string
	var wait time.Duration
	fs.BoolVar(&find, "find", false, "say where NCCL is, by which rule, and its version (preflight), and exit")
	fs.IntVar(&o.Rank, "rank", envInt("RANK", 0), "this rank (default $RANK)")
	fs.IntVar(&o.Ranks, "ranks", envInt("WORLD_SIZE", 1), "number of ranks (default $WORLD_SIZE)")
	fs.IntVar(&o.Device, "device", envInt("LOCAL_RANK", 0), "GPU ordinal (default $LOCAL_RANK)")
	fs.StringVar(&o.Collective, "collective", "all_reduce", "all_reduce, all_gather, reduce_scatter, alltoall, sendrecv or broadcast; or copy: --device READs --peer-device with the copy engines (one process, no NCCL)")
	fs.IntVar(&o.PeerDevice, "peer-device", -1, "the GPU ordinal --collective copy reads from (after CUDA_VISIBLE_DEVICES)")
	fs.StringVar(&o.DataType, "d", "float", "data type, as nccl-tests -d")
	fs.StringVar(&minB, "b", "32M", "smallest size (nccl-tests -b)")
	fs.StringVar(&maxB, "e", "32M", "largest size (nccl-tests -e)")
	fs.Int64Var(&o.StepFactor, "f", 2, "size multiplier (nccl-tests -f)")
	fs.IntVar(&o.Iters, "n", 20, "timed iterations per size (nccl-tests -n)")
	fs.IntVar(&o.Warmup, "w", 5, "warm-up iterations per size (nccl-tests -w)")
	check := fs.Int("c", 1, "check the results (nccl-tests -c)")
	fs.StringVar(&o.Rendezvous.Endpoint, "etcd", "", "etcd client URL for the unique id (several ranks)")
	fs.StringVar(&o.Rendezvous.Key, "key", "", "etcd key of this job's unique id")
	fs.DurationVar(&wait, "rendezvous-timeout", 2*time.Minute, "how long a rank waits for rank 0's id")
	fs.DurationVar(&limit, "time-limit", 30*time.Minute, "bound on the whole run")
	fs.StringVar(&o.CUDA, "cuda", "libcuda.so.1", "the CUDA driver library")
	ncclPath := fs.String("nccl", "", "the NCCL library (default: found as vLLM finds it)")
	fs.StringVar(&o.Host, "host", "", "this rank's name in the device list (default: the host name)")
	if os.Getenv("NCCL_DEBUG_FILE") == os.Getenv(relayEnv) {
		o.Log = nccl.NewLogRelay(os.Getenv(relayEnv))
	}
	if err = fs.Parse(args); err != nil {
		return o, 0, false, err
	}
	if fs.NArg() > 0 {
		return o, 0, false, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if o.MinBytes, err = units.ParseSize(minB); err != nil {
		return o, 0, false, fmt.Errorf("-b %q: %w", minB, err)
	}
	if o.MaxBytes, err = units.ParseSize(maxB); err != nil {
		return o, 0, false, fmt.Errorf("-e %q: %w", maxB, err)
	}
	o.Check = *check != 0
	o.Rendezvous.Wait = wait
	if *ncclPath != "" {
		o.NCCL = &nccl.Library{Path: *ncclPath, FoundBy: "--nccl", Looked: []string{*ncclPath}}
	}
	return o, limit, find, nil
}

func envInt(k string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(k), &v); err != nil {
		return def
	}
	return v
}
