// Command rdmabench-nixl is rdmabench's NIXL probe: one side (target =
// prefill, initiator = decode) of a KV-cache transfer, run with the
// serving image's python3 and its nixl package (package probe/nixl).
// rdmabench starts the target, then the initiator, in the pods' one
// container; the agents' metadata goes through rdmabench's etcd.
//
//	rdmabench-nixl --role target --etcd http://10.0.0.5:2379 --key /rdmabench/RUN/nixl/JOB --target-seg VRAM ...
//	rdmabench-nixl --find        # what preflight reads: python3, nixl, its version and plugins
package main

import (
	"context"
	"os"

	"github.com/rdmabench/rdmabench/probe/nixl"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "--find" {
		os.Exit(nixl.Find(context.Background(), os.Stdout))
	}
	os.Exit(nixl.Run(context.Background(), nixl.Options{Args: args, Limit: nixl.LimitOf(args), Stdout: os.Stdout, Stderr: os.Stderr}))
}
