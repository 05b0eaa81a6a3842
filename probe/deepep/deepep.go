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
	"context"
	_ "embed"
	"io"
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

// findScript prints what preflight needs to know, one key=value a line,
// without a GPU: torch and its CUDA and NCCL, deep_ep (V1 or V2) and the
// NVSHMEM wheel beside it. Importing deep_ep loads its extension, which
// links libcuda: an image without the driver says so here.
const findScript = `
import sys
print("python-version=" + sys.version.split()[0])
def meta(*names):
    try:
        from importlib import metadata
    except ImportError:
        return ""
    for n in names:
        try:
            return metadata.version(n)
        except Exception:
            pass
    return ""
try:
    import torch
except Exception as e:
    print("torch=notfound")
    print("torch-error=" + str(e).replace("\n", " "))
    sys.exit(0)
print("torch=" + torch.__version__)
print("torch-cuda=" + str(torch.version.cuda))
try:
    v = torch.cuda.nccl.version()
    print("nccl=" + (".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)))
except Exception as e:
    print("nccl=unknown")
print("nvshmem=" + (meta("nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12") or "unknown"))
try:
    import deep_ep
except Exception as e:
    print("deep_ep=notfound")
    print("deep_ep-error=" + str(e).replace("\n", " "))
    sys.exit(0)
import os
print("deep_ep=" + os.path.dirname(deep_ep.__file__ or ""))
print("deep_ep-version=" + (meta("deep_ep", "deep-ep") or getattr(deep_ep, "__version__", "") or "unknown"))
if hasattr(deep_ep, "ElasticBuffer"):
    print("deep_ep-api=V2")
elif hasattr(deep_ep, "Buffer") and hasattr(deep_ep.Buffer, "low_latency_dispatch"):
    print("deep_ep-api=V1")
else:
    print("deep_ep-api=unknown")
`

// Find runs the find script: what preflight reads (python=, then the
// interpreter's torch=, nccl=, nvshmem=, deep_ep=, deep_ep-version=,
// deep_ep-api=, or deep_ep-error=).
func Find(ctx context.Context, stdout io.Writer) int {
	return pyprobe.Find(ctx, stdout, findScript, "deep_ep-error")
}
