// Package etcd runs the etcd that nixlbench ranks rendezvous through: in
// process for a local run (127.0.0.1, free ports, a temporary data folder),
// or standalone (`rdmabench etcd`) in a pod for the Kubernetes backend. A
// Group follows one leg's keys in it, and clears what the leg left.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// StartTimeout bounds how long the server may take to become ready.
const StartTimeout = 30 * time.Second

// Config says where a server listens and keeps its data.
type Config struct {
	// ClientURLs to listen on; empty means 127.0.0.1 on a free port.
	ClientURLs []string
	// AdvertiseURLs are the client URLs given to peers; default ClientURLs.
	AdvertiseURLs []string
	// PeerURL to listen on; empty means 127.0.0.1 on a free port.
	PeerURL string
	// DataDir holds the data; empty means a new temporary folder that
	// Close removes.
	DataDir string
	// LogLevel is etcd's (debug, info, warn, error); default error.
	LogLevel string
	// LogOutputs are "stderr", "stdout" or file paths; default discards.
	LogOutputs []string
	// Name is the member's name (default "rdmabench"): a run that starts
	// an etcd elsewhere names it, to tell its own from one already there.
	Name string
}

// Server is a running etcd.
type Server struct {
	e       *embed.Etcd
	tempDir string
	// URL is the client URL tools and the runner connect to.
	URL string
}

// Start starts an etcd server and waits (bounded) until it serves.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	ec, temp, err := embedConfig(cfg)
	if err != nil {
		return nil, err
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		if temp != "" {
			os.RemoveAll(temp)
		}
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	s := &Server{e: e, tempDir: temp}
	t := time.NewTimer(StartTimeout)
	defer t.Stop()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		s.Close()
		return nil, fmt.Errorf("etcd failed while starting: %w", err)
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	case <-t.C:
		s.Close()
		return nil, fmt.Errorf("etcd did not become ready within %s", StartTimeout)
	}
	s.URL = "http://" + e.Clients[0].Addr().String()
	if len(cfg.AdvertiseURLs) > 0 {
		s.URL = cfg.AdvertiseURLs[0]
	}
	return s, nil
}

func embedConfig(cfg Config) (*embed.Config, string, error) {
	ec := embed.NewConfig()
	ec.Name = "rdmabench"
	if cfg.Name != "" {
		ec.Name = cfg.Name
	}
	ec.LogLevel = "error"
	if cfg.LogLevel != "" {
		ec.LogLevel = cfg.LogLevel
	}
	ec.LogOutputs = []string{"/dev/null"}
	if len(cfg.LogOutputs) > 0 {
		ec.LogOutputs = cfg.LogOutputs
	}
	clients, err := urlsOrFree(cfg.ClientURLs)
	if err != nil {
		return nil, "", err
	}
	adv := clients
	if len(cfg.AdvertiseURLs) > 0 {
		if adv, err = parseURLs(cfg.AdvertiseURLs); err != nil {
			return nil, "", err
		}
	}
	var peerIn []string
	if cfg.PeerURL != "" {
		peerIn = []string{cfg.PeerURL}
	}
	peers, err := urlsOrFree(peerIn)
	if err != nil {
		return nil, "", err
	}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = clients, adv
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = peers, peers
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	ec.Dir = cfg.DataDir
	temp := ""
	if ec.Dir == "" {
		if temp, err = os.MkdirTemp("", "rdmabench-etcd-*"); err != nil {
			return nil, "", err
		}
		ec.Dir = temp
		// Scratch data of one run: durability is not worth the fsyncs.
		ec.UnsafeNoFsync = true
	}
	return ec, temp, nil
}

// urlsOrFree parses urls, or returns one 127.0.0.1 URL on a free port.
func urlsOrFree(urls []string) ([]url.URL, error) {
	if len(urls) > 0 {
		return parseURLs(urls)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return []url.URL{{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port)}}, nil
}

// CheckURLs reports the first URL that is not scheme://host:port, so that
// a command can call it a usage error before starting anything.
func CheckURLs(urls ...string) error {
	_, err := parseURLs(urls)
	return err
}

// CheckClientURL checks the URL of an etcd the run connects to (run
// --etcd): plain http (the run's client has no TLS settings), a host and a
// port, nothing after them. nixlbench takes what it is given verbatim.
func CheckClientURL(list string) error {
	for _, s := range strings.Split(list, ",") { // a cluster's members, as nixlbench takes them
		if err := checkClientURL(s); err != nil {
			return err
		}
	}
	return nil
}

func checkClientURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "":
		return fmt.Errorf("%q is not a URL: want http://HOST:PORT, e.g. http://10.0.0.5:2379", s)
	case u.Scheme != "http":
		return fmt.Errorf("%q: only http:// is supported (the run's etcd client has no TLS settings)", s)
	case u.Port() == "":
		return fmt.Errorf("%q has no port: want http://%s:2379", s, u.Hostname())
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil:
		return fmt.Errorf("%q: want only http://HOST:PORT (no path, query or user)", s)
	}
	return nil
}

func parseURLs(ss []string) ([]url.URL, error) {
	out := make([]url.URL, 0, len(ss))
	for _, s := range ss {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("etcd URL %q: want scheme://host:port, e.g. http://0.0.0.0:2379", s)
		}
		out = append(out, *u)
	}
	return out, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port for etcd: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Err reports a server failure after start (nil channel value while healthy).
func (s *Server) Err() <-chan error { return s.e.Err() }

// Close stops the server and removes its temporary data folder.
func (s *Server) Close() error {
	s.e.Close()
	if s.tempDir != "" {
		return os.RemoveAll(s.tempDir)
	}
	return nil
}

// Client returns a client of this server; the caller closes it.
func (s *Server) Client() (*clientv3.Client, error) {
	return NewClient(s.URL)
}

// NewClient connects to an etcd at url (or a comma-separated list of its
// members' URLs) with a bounded dial.
func NewClient(url string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: strings.Split(url, ","), DialTimeout: 5 * time.Second, Logger: nopLogger()})
}

// AnswerBound bounds the first request to an etcd: an address that does
// not answer fails the run's start, rather than a leg waiting for ever.
var AnswerBound = 10 * time.Second

// Answers checks that the etcd behind c serves a read within AnswerBound.
func Answers(ctx context.Context, c *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, AnswerBound)
	defer cancel()
	if _, err := c.Get(ctx, "rdmabench-probe", clientv3.WithCountOnly()); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer within %s", AnswerBound)
		}
		return err
	}
	return nil
}

// MemberName is the name of the etcd member c's endpoint answers for.
func MemberName(ctx context.Context, c *clientv3.Client) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, AnswerBound)
	defer cancel()
	resp, err := c.MemberList(ctx)
	if err != nil {
		return "", err
	}
	if len(resp.Members) != 1 {
		return "", fmt.Errorf("%d members: not an etcd of one run", len(resp.Members))
	}
	return resp.Members[0].Name, nil
}

// DeletePrefix removes every key under prefix and returns how many.
func DeletePrefix(ctx context.Context, c *clientv3.Client, prefix string) (int64, error) {
	if prefix == "" {
		return 0, errors.New("refusing to delete an empty prefix")
	}
	resp, err := c.Delete(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("etcd: delete prefix %s: %w", prefix, err)
	}
	return resp.Deleted, nil
}

// ClearPrefix removes everything a tool left under prefix: first the
// leases its keys hold (nixlbench's rank keys, the lock its Lock call
// took: a killed process leaves them to expire on their own, and a lease
// revoked deletes every key it holds), then whatever keys remain. It
// returns how many keys were there and how many leases it revoked.
func ClearPrefix(ctx context.Context, c *clientv3.Client, prefix string) (keys int64, leases int, err error) {
	if prefix == "" {
		return 0, 0, errors.New("refusing to clear an empty prefix")
	}
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix()) // (keys-only answers carry no lease)
	if err != nil {
		return 0, 0, fmt.Errorf("etcd: list prefix %s: %w", prefix, err)
	}
	seen := map[int64]bool{}
	for _, kv := range resp.Kvs {
		if kv.Lease == 0 || seen[kv.Lease] {
			continue
		}
		seen[kv.Lease] = true
		// A lease that expired meanwhile is gone already: not an error.
		if _, err := c.Revoke(ctx, clientv3.LeaseID(kv.Lease)); err == nil {
			leases++
		}
	}
	if _, err := DeletePrefix(ctx, c, prefix); err != nil {
		return int64(len(resp.Kvs)), leases, err
	}
	return int64(len(resp.Kvs)), leases, nil
}

// CountPrefix returns how many keys exist under prefix.
func CountPrefix(ctx context.Context, c *clientv3.Client, prefix string) (int64, error) {
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd: count prefix %s: %w", prefix, err)
	}
	return resp.Count, nil
}
