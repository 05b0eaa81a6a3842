// Command kubecluster runs the kube test lane's cluster by hand:
//
//	go run ./test/kubecluster up --nodes 3 --kubeconfig /tmp/kc
//
// It prints the kubeconfig path and how to use it, blocks until SIGINT or
// SIGTERM, then removes everything it started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "up" {
		fmt.Fprintln(stderr, "usage: kubecluster up [--nodes N] [--kubeconfig FILE] [--workdir DIR] [--bin DIR]")
		return 2
	}
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := cluster.Options{Log: stderr}
	fs.IntVar(&opts.Nodes, "nodes", 3, "number of nodes")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "where to write the admin kubeconfig (default WORKDIR/kubeconfig)")
	fs.StringVar(&opts.WorkDir, "workdir", "", "certificates, logs and kubeconfigs (default a temporary folder, removed at exit)")
	fs.StringVar(&opts.BinDir, "bin", "", "kube-apiserver, kube-scheduler, kube-controller-manager (default .work/bin, built when missing)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if opts.Kubeconfig != "" {
		abs, err := filepath.Abs(opts.Kubeconfig)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		opts.Kubeconfig = abs
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "kubecluster:", err)
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", c.Kubeconfig)
	fmt.Fprintf(stderr, "kubecluster: %d nodes %v; apiserver %s; logs in %s/logs\n", len(c.NodeNames()), c.NodeNames(), c.Server, c.WorkDir)
	fmt.Fprintf(stderr, "kubecluster: export KUBECONFIG=%s  (kubectl get nodes; rdmabench run --kubeconfig %s ...)\n", c.Kubeconfig, c.Kubeconfig)
	fmt.Fprintln(stderr, "kubecluster: Ctrl-C stops it and removes everything it started")
	<-ctx.Done()
	stop()
	fmt.Fprintln(stderr, "kubecluster: stopping")
	if err := c.Stop(); err != nil {
		fmt.Fprintln(stderr, "kubecluster: stop:", err)
		return 1
	}
	if opts.Kubeconfig != "" {
		_ = os.Remove(opts.Kubeconfig)
	}
	return 0
}
