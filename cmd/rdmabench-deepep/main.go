// Command rdmabench-deepep is rdmabench's DeepEP probe: one rank (one GPU)
// of DeepEP's dispatch and combine, run with the serving image's python3,
// torch and deep_ep (package probe/deepep). rdmabench starts one per GPU
// of every rank's endpoint, rank 0 first, with torch.distributed's env
// contract (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK).
//
//	RANK=0 WORLD_SIZE=4 LOCAL_RANK=0 MASTER_ADDR=10.0.0.5 MASTER_PORT=29600 rdmabench-deepep --mode both --hidden 7168 ...
//	rdmabench-deepep --find        # what preflight reads: python3, torch, NCCL, NVSHMEM, deep_ep and its API
package main

import (
	"context"
	"os"

	"github.com/rdmabench/rdmabench/probe/deepep"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "--find" {
		os.Exit(deepep.Find(context.Background(), os.Stdout))
	}
	os.Exit(deepep.Run(context.Background(), deepep.Options{Args: args, Limit: deepep.LimitOf(args), Stdout: os.Stdout, Stderr: os.Stderr}))
}
