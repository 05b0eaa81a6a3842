package nixl

import (
	"context"
	"io"
	"time"

	"github.com/rdmabench/rdmabench/probe/pyprobe"
)

// Options is one run of the probe.
type Options = pyprobe.Options

// Grace is how long the probe has to end after SIGTERM before it is killed.
const Grace = pyprobe.Grace

// script is the probe as package pyprobe runs it.
var script = pyprobe.Script{Program: Program, Name: "rdmabench_nixl.py", Source: Script, Stuck: "the peer missing, or NIXL stuck"}

// Run runs the probe under the image's python3 and returns its exit
// status: the probe's own, 124 past the limit, 128+signal when stopped by
// one (pyprobe.Script.Run).
func Run(ctx context.Context, o Options) int { return script.Run(ctx, o) }

// LimitOf is the watchdog for the probe's own --time-limit (seconds): that
// and half a minute, so that the probe's own bound speaks first.
func LimitOf(args []string) time.Duration { return pyprobe.LimitOf(args) }

// Find runs the find script: what preflight reads (FindLines, then the
// interpreter's python-version=, nixl=, nixl-version=, plugins=, torch=).
func Find(ctx context.Context, stdout io.Writer) int {
	return pyprobe.Find(ctx, stdout, findScript, "nixl-error")
}
