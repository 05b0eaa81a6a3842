// Command rdmabench-nixl is rdmabench's NIXL probe: one side (target =
// prefill, initiator = decode) of a KV-cache transfer, run with the
// serving image's python3 and its nixl package (package probe/nixl).
// rdmabench starts the target, then the initiator, in the pods' one
// container; the agents' metadata goes through rdmabench's etcd.
//
//	rdmabench-nixl --role target --etcd http://10.0.0.5:2379 --key /rdmabench/RUN/nixl/JOB --target-seg VRAM ...
//	rdmabench-nixl --find        # what preflight reads: python3, nixl, its version and plugins
//
// --native (both sides): nixlbench's loop and target in Go, through the C
// API of the NIXL the image's python3 loads (package probe/nixlnative,
// built into rdmabench-nccl, which loads libraries; this program stays
// static): the fabric and NIXL without Python's per-call cost.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/rdmabench/rdmabench/probe/nixl"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "--find" {
		os.Exit(nixl.Find(context.Background(), os.Stdout))
	}
	if slices.ContainsFunc(args, nativeFlag) {
		os.Exit(native(args))
	}
	os.Exit(nixl.Run(context.Background(), nixl.Options{Args: args, Limit: nixl.LimitOf(args), Stdout: os.Stdout, Stderr: os.Stderr}))
}

// nativeFlag is --native as Go's flag package (the native probe's) reads it.
func nativeFlag(a string) bool {
	switch a {
	case "--native", "-native", "--native=true", "-native=true", "--native=1", "-native=1":
		return true
	}
	return false
}

// native becomes the native probe's side: rdmabench-nccl beside this program
// (the bundle's folder), else on PATH; the same process, so that signals
// and the exit status are the initiator's own.
func native(args []string) int {
	host := ""
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), nixl.NativeHost); isFile(p) {
			host = p
		}
	}
	if host == "" {
		p, err := exec.LookPath(nixl.NativeHost)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: --native runs the initiator in %s, which is neither beside this program nor on PATH: install rdmabench's bundle whole\n", nixl.Program, nixl.NativeHost)
			return 1
		}
		host = p
	}
	err := syscall.Exec(host, append([]string{host, nixl.NativeSubcommand}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "%s: --native: start %s: %v\n", nixl.Program, host, err)
	return 1
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
