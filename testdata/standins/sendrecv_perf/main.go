// Command sendrecv_perf is a stand-in for nccl-tests' sendrecv_perf: same flags,
// output and exit codes; ranks are goroutines moving real bytes in memory.
package main

import (
	"os"

	"github.com/rdmabench/rdmabench/testdata/standins/internal/ncclsim"
)

func main() { os.Exit(ncclsim.Main("sendrecv", os.Args[1:], os.Stdout, os.Stderr)) }
