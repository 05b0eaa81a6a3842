package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
)

// etcdOptions are the flags of `rdmabench etcd`.
type etcdOptions struct {
	listenClientURLs    []string
	advertiseClientURLs []string
	listenPeerURL       string
	dataDir             string
	logLevel            string
	name                string
}

// newEtcdCmd runs one standalone etcd until Ctrl-C: the rendezvous of
// nixlbench ranks when they run in pods (the Kubernetes backend runs it).
func newEtcdCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &etcdOptions{}
	cmd := &cobra.Command{
		Use:     "etcd",
		Example: `  rdmabench etcd --listen-client-urls http://0.0.0.0:2379 --advertise-client-urls http://10.0.0.5:2379`,
		Short:   "Run a standalone etcd for nixlbench rendezvous until interrupted",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runEtcd(c.Context(), o, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&o.listenClientURLs, "listen-client-urls", []string{"http://127.0.0.1:2379"}, "client URLs to listen on")
	fl.StringSliceVar(&o.advertiseClientURLs, "advertise-client-urls", nil, "client URLs to advertise (default: the listen URLs)")
	fl.StringVar(&o.listenPeerURL, "listen-peer-url", "", "peer URL (default 127.0.0.1 on a free port)")
	fl.StringVar(&o.dataDir, "data-dir", "", "data folder (default: a temporary folder removed on exit)")
	fl.StringVar(&o.logLevel, "log-level", "warn", "etcd log level: debug, info, warn, error")
	fl.StringVar(&o.name, "name", "rdmabench", "the member's name (a run names the etcd it starts on a host, to know it for its own)")
	return cmd
}

func runEtcd(ctx context.Context, o *etcdOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	urls := append(append([]string{}, o.listenClientURLs...), o.advertiseClientURLs...)
	if o.listenPeerURL != "" {
		urls = append(urls, o.listenPeerURL)
	}
	if err := runetcd.CheckURLs(urls...); err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := runetcd.Start(ctx, runetcd.Config{
		ClientURLs: o.listenClientURLs, AdvertiseURLs: o.advertiseClientURLs, PeerURL: o.listenPeerURL,
		DataDir: o.dataDir, LogLevel: o.logLevel, LogOutputs: []string{"stderr"}, Name: o.name,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "etcd serving at %s\n", srv.URL)
	fmt.Fprintln(stderr, "press Ctrl-C to stop")
	select {
	case <-ctx.Done():
		return nil
	case err := <-srv.Err():
		return fmt.Errorf("etcd stopped: %w", err)
	}
}
