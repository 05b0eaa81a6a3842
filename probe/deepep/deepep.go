// Package deepep runs rdmabench's DeepEP probe (rdmabench_deepep.py,
// embedded): the expert-parallel dispatch and combine of WideEP serving,
// driven through DeepEP V1's Python API as vLLM's deepep_high_throughput
// and deepep_low_latency backends drive it, with the python3, torch and
// deep_ep of the image that serves. The probe is Python because deep_ep
// is a torch extension; one process per GPU, launched without MPI through
// torch.distributed's env contract (MASTER_ADDR, MASTER_PORT, RANK,
// WORLD_SIZE, LOCAL_RANK). Package pyprobe finds the interpreter and
// bounds the run.
package deepep

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/probe/pyprobe"
)

// Program is the probe's binary, as scenarios and parsers name it.
const Program = "rdmabench-deepep"

// Script is the probe itself.
//
//go:embed rdmabench_deepep.py
var Script []byte

// Options is one run of the probe.
type Options = pyprobe.Options

var script = pyprobe.Script{Program: Program, Name: "rdmabench_deepep.py", Source: Script,
	Stuck: "a rank missing at the rendezvous, or a DeepEP kernel waiting on a peer"}

// Run runs one rank of the probe under the image's python3 and returns its
// exit status: the probe's own, 124 past the limit, 128+signal when
// stopped by one.
func Run(ctx context.Context, o Options) int { return script.Run(ctx, o) }

// LimitOf is the watchdog for the probe's own --time-limit (seconds), and
// half a minute more.
func LimitOf(args []string) time.Duration { return pyprobe.LimitOf(args) }

// Find prints what preflight reads: python= (pyprobe.FindLines), then the
// script's own --find lines (torch=, nccl=, nvshmem=, deep_ep=,
// deep_ep-version=, deep_ep-api=, or deep_ep-error=), bounded to a minute.
func Find(ctx context.Context, stdout io.Writer) int {
	for _, l := range pyprobe.FindLines() {
		fmt.Fprintln(stdout, l)
	}
	if p, _, _ := pyprobe.Python(); p == "" {
		return 0
	}
	var errs bytes.Buffer
	if code := script.Run(ctx, Options{Args: []string{"--find"}, Limit: time.Minute, Stdout: stdout, Stderr: &errs}); code != 0 {
		fmt.Fprintf(stdout, "deep_ep-error=exit %d: %s\n", code, strings.Join(strings.Fields(errs.String()), " "))
	}
	return 0
}
