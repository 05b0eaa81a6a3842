// Command kubecluster runs the kube test lane's cluster by hand:
//
//	go run ./test/kubecluster up --nodes 3 --kubeconfig /tmp/kc
//
// It prints the kubeconfig path and how to use it, blocks until SIGINT or
// SIGTERM, then removes everything it started; `kubecluster down` (make
// kube-down) sends that SIGTERM to one started in the background. `make kube-up` runs it with
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
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "down" {
		return down(args[1:], stderr)
	}
	if len(args) == 0 || args[0] != "up" {
		fmt.Fprintln(stderr, "usage: kubecluster up [--nodes N] [--kubeconfig FILE] [--workdir DIR] [--bin DIR] [--nad NAMESPACE/NAME] [--next COMMAND] [--pidfile FILE]\n       kubecluster down [--pidfile FILE]")
		return 2
	}
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := cluster.Options{Log: stderr}
	fs.IntVar(&opts.Nodes, "nodes", 3, "number of nodes")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "where to write the admin kubeconfig (default WORKDIR/kubeconfig)")
	fs.StringVar(&opts.WorkDir, "workdir", "", "certificates, logs and kubeconfigs (default a temporary folder, removed at exit)")
	fs.StringVar(&opts.BinDir, "bin", "", "kube-apiserver, kube-scheduler, kube-controller-manager (default .work/bin, built when missing)")
	var joins joinFlag
	fs.Var(&joins, "join", "NAME=IP=KUBELETADDR: a machine that joins with its own kubelet (repeatable); its files go to WORKDIR/join/NAME")
	nad := fs.String("nad", "", "NAMESPACE/NAME: serve the NetworkAttachmentDefinition API and create this NAD (and its namespace)")
	next := fs.String("next", "", "the command to suggest once the cluster is up")
	pidfile := fs.String("pidfile", "", "write this process's pid here while the cluster runs (kubecluster down, make kube-down, stops it)")
	apiIP := fs.String("apiserver-ip", "", "the address joining machines reach this host by (10.0.2.2 from a QEMU guest); their kubeconfig names it")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	opts.JoinNodes = joins
	if *apiIP != "" {
		ip := net.ParseIP(*apiIP)
		if ip == nil {
			fmt.Fprintf(stderr, "--apiserver-ip %q: not an IP address\n", *apiIP)
			return 2
		}
		opts.APIServerIPs = []net.IP{ip}
	}
	if len(joins) > 0 && *apiIP == "" {
		fmt.Fprintln(stderr, "--join needs --apiserver-ip (the address the machines reach this host by)")
		return 2
	}
	nodesSet := false
	fs.Visit(func(f *flag.Flag) { nodesSet = nodesSet || f.Name == "nodes" })
	if len(joins) > 0 && !nodesSet {
		opts.Nodes = 0 // only the joining machines
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
	removePID, err := writePIDFile(*pidfile)
	if err != nil {
		fmt.Fprintln(stderr, "kubecluster:", err)
		return 1
	}
	defer removePID()
	klogs := &klogSink{} // client-go's "Caches are synced" lines: the log, not the terminal
	quietKlog(klogs)
	defer klogs.close()
	opts.Klog = klogs
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
	for _, j := range joins {
		if err := writeJoinFiles(c, j.Name, *apiIP); err != nil {
			fmt.Fprintln(stderr, "kubecluster:", err)
			_ = c.Stop()
			return 1
		}
		fmt.Fprintf(stderr, "kubecluster: %s's kubelet files in %s (images/softroce/node/join.sh reads them from /etc/kubernetes)\n",
			j.Name, filepath.Join(c.WorkDir, "join", j.Name))
	}
	if err := klogs.toFile(filepath.Join(c.WorkDir, "logs", "client-go.log")); err != nil {
		fmt.Fprintln(stderr, "kubecluster: client-go's log:", err)
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
	fmt.Fprintln(stderr, "kubecluster: Ctrl-C (or make kube-down) stops it and removes everything it started")
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

// joinFlag is --join NAME=IP=KUBELETADDR, repeatable.
type joinFlag []cluster.JoinNode

func (j *joinFlag) String() string { return fmt.Sprint(*j) }

func (j *joinFlag) Set(v string) error {
	parts := strings.SplitN(v, "=", 3)
	if len(parts) != 3 || net.ParseIP(parts[1]) == nil {
		return fmt.Errorf("%q: want NAME=IP=KUBELETADDR, e.g. vm1=10.9.0.1=127.0.0.1:42251", v)
	}
	*j = append(*j, cluster.JoinNode{Name: parts[0], IP: net.ParseIP(parts[1]), KubeletAddr: parts[2]})
	return nil
}

// writeJoinFiles writes a joining machine's kubelet files, its kubeconfig
// naming the apiserver at apiIP.
func writeJoinFiles(c *cluster.Cluster, name, apiIP string) error {
	files, err := c.JoinFiles(name, fmt.Sprintf("https://%s", net.JoinHostPort(apiIP, strconv.Itoa(c.APIServerPort))))
	if err != nil {
		return err
	}
	dir := filepath.Join(c.WorkDir, "join", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			return err
		}
	}
	return nil
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
