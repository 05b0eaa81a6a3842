// Command kubecluster runs the kube test lane's cluster by hand:
//
//	go run ./test/kubecluster up --nodes 3 --kubeconfig /tmp/kc
//
// It prints the kubeconfig path and how to use it, blocks until SIGINT or
// SIGTERM, then removes everything it started. `make kube-up` runs it with
// four nodes (pd-disagg's and wideep's pods, one per node) and --nad
// rdmabench/rdma-sriov: the NetworkAttachmentDefinition API and the NAD the
// shipped kube scenarios name.
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
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "up" {
		fmt.Fprintln(stderr, "usage: kubecluster up [--nodes N] [--kubeconfig FILE] [--workdir DIR] [--bin DIR] [--nad NAMESPACE/NAME] [--next COMMAND]")
		return 2
	}
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := cluster.Options{Log: stderr}
	fs.IntVar(&opts.Nodes, "nodes", 3, "number of nodes")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "where to write the admin kubeconfig (default WORKDIR/kubeconfig)")
	fs.StringVar(&opts.WorkDir, "workdir", "", "certificates, logs and kubeconfigs (default a temporary folder, removed at exit)")
	fs.StringVar(&opts.BinDir, "bin", "", "kube-apiserver, kube-scheduler, kube-controller-manager (default .work/bin, built when missing)")
	nad := fs.String("nad", "", "NAMESPACE/NAME: serve the NetworkAttachmentDefinition API and create this NAD (and its namespace)")
	next := fs.String("next", "", "the command to suggest once the cluster is up")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	nadNS, nadName, err := splitNAD(*nad)
	if err != nil {
		fmt.Fprintln(stderr, "kubecluster:", err)
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
	began := time.Now()
	done := make(chan struct{})
	go progress(stderr, began, done)
	c, err := cluster.Start(ctx, opts)
	if err == nil && nadName != "" {
		err = addNAD(ctx, c, nadNS, nadName)
	}
	close(done)
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
	if nadName != "" {
		fmt.Fprintf(stderr, "kubecluster: NetworkAttachmentDefinition %s/%s (the secondary network the node agents attach)\n", nadNS, nadName)
	}
	fmt.Fprintf(stderr, "kubecluster: up in %s\n", time.Since(began).Round(time.Second))
	if *next != "" {
		fmt.Fprintf(stderr, "kubecluster: next, in another terminal:\n  %s\n", strings.ReplaceAll(*next, "KUBECONFIG_FILE", c.Kubeconfig))
	}
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

// splitNAD reads --nad NAMESPACE/NAME ("" is none).
func splitNAD(s string) (string, string, error) {
	if s == "" {
		return "", "", nil
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("--nad %q: want NAMESPACE/NAME, e.g. rdmabench/rdma-sriov", s)
	}
	return ns, name, nil
}

// addNAD serves the NetworkAttachmentDefinition API and creates the NAD
// named, in its namespace (created when missing).
func addNAD(ctx context.Context, c *cluster.Cluster, ns, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := c.InstallMultusAPI(ctx); err != nil {
		return fmt.Errorf("NetworkAttachmentDefinition API: %w", err)
	}
	_, err := c.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	if err := c.CreateNAD(ctx, ns, name); err != nil {
		return fmt.Errorf("NetworkAttachmentDefinition %s/%s: %w", ns, name, err)
	}
	return nil
}

// progress says every 10 s that the cluster is still starting (building
// the control plane the first time takes minutes), until done.
func progress(w io.Writer, began time.Time, done <-chan struct{}) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			fmt.Fprintf(w, "kubecluster: starting… %s (control plane binaries are built once into .work/bin; the apiserver, scheduler, controller-manager and node agents start next)\n", time.Since(began).Round(time.Second))
		}
	}
}
