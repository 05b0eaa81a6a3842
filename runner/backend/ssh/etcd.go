package ssh

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
)

// The run's etcd listens on its host at a port drawn from this range (a
// fixed port would be a second run's, or the host's own etcd's), under a
// member name of its own, so that the runner knows it answers its own.
const (
	etcdPortBase  = 20000
	etcdPortRange = 10000
	etcdAttempts  = 3
)

// etcdStartBound bounds the etcd's start on its host.
const etcdStartBound = 60 * time.Second

// StartEtcd runs nixlbench's etcd for this run on the first endpoint's host
// (`rdmabench etcd` there, listening on its data address), because the
// run's hosts need not reach this machine. The runner's own client reaches
// it through a forward over that host's ssh connection. It returns the URL
// the tools use and the local one; Cleanup stops the etcd (a tracked
// process) and the forward. A port another process holds is left for
// another, at most etcdAttempts times.
func (b *Backend) StartEtcd(ctx context.Context) (toolURL, localURL string, err error) {
	b.mu.Lock()
	var ep endpoint.Endpoint
	if len(b.provisioned) > 0 {
		ep = b.provisioned[0]
	}
	b.mu.Unlock()
	if ep.Name == "" {
		return "", "", fmt.Errorf("ssh: no endpoint to run nixlbench's etcd on (Provision first)")
	}
	ctx, cancel := context.WithTimeout(ctx, etcdStartBound)
	defer cancel()
	for attempt := 1; ; attempt++ {
		port := b.etcdPort()
		toolURL, localURL, taken, err := b.startEtcdAt(ctx, ep, port)
		if !taken || attempt == etcdAttempts {
			return toolURL, localURL, err
		}
	}
}

// etcdPort draws a port for the run's etcd (tests pick their own).
func (b *Backend) etcdPort() int {
	if b.pickEtcdPort != nil {
		return b.pickEtcdPort()
	}
	return etcdPortBase + rand.IntN(etcdPortRange)
}

// startEtcdAt starts the etcd at port; taken says the port was someone
// else's (the etcd could not bind it, or another etcd answers there).
func (b *Backend) startEtcdAt(ctx context.Context, ep endpoint.Endpoint, port int) (toolURL, localURL string, taken bool, err error) {
	addr := net.JoinHostPort(ep.Address, strconv.Itoa(port))
	toolURL = "http://" + addr
	name := fmt.Sprintf("rdmabench-%08x", rand.Uint32())
	out := &lockedBuffer{b: &bytes.Buffer{}}
	p, err := b.start(ctx, ep, backend.Command{Argv: []string{"rdmabench", "etcd", "--name", name, "--listen-client-urls", toolURL},
		Stdout: out, Stderr: out})
	if err != nil {
		return "", "", false, fmt.Errorf("ssh: start rdmabench etcd on %s: %w", ep.Host, err)
	}
	h, _ := b.host(ep)
	local, err := b.forward(h.Name, addr)
	if err != nil {
		return "", "", false, err
	}
	localURL = "http://" + local
	for {
		select { // first: an etcd that could not start must not pass for one that answers
		case <-p.Done():
			if strings.Contains(out.text(), "address already in use") {
				return "", "", true, fmt.Errorf("ssh: port %d on %s is taken: %s", port, ep.Host, out.text())
			}
			return "", "", false, fmt.Errorf("ssh: rdmabench etcd on %s exited (%s): %s (install rdmabench on the host, or pass --etcd with an etcd the hosts and this machine reach)",
				ep.Host, exitWords(p.Exit), out.text())
		default:
		}
		if etcdServes(ctx, localURL) {
			got, err := memberName(ctx, localURL)
			switch {
			case err == nil && got == name:
				return toolURL, localURL, false, nil
			case err == nil:
				_ = p.Kill() // another etcd answers: ours, if it runs, is not the one to use
				return "", "", true, fmt.Errorf("ssh: another etcd answers at %s on %s (member %q)", toolURL, ep.Host, got)
			}
			// The name could not be read (a loaded host, an etcd still
			// starting): ask again, within the bound, rather than take our
			// own etcd for someone else's.
		}
		select {
		case <-p.Done():
		case <-ctx.Done():
			return "", "", false, fmt.Errorf("ssh: etcd on %s did not serve %s within %s: %s", ep.Host, toolURL, etcdStartBound, out.text())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// memberName asks the etcd at url for its member's name.
func memberName(ctx context.Context, url string) (string, error) {
	c, err := runetcd.NewClient(url)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return runetcd.MemberName(ctx, c)
}

func exitWords(e backend.Exit) string {
	if e.Code == 127 {
		return "exit 127: rdmabench is not on the host's PATH"
	}
	return "exit " + strconv.Itoa(e.Code)
}

// etcdServes is etcd's /health answering 200.
func etcdServes(ctx context.Context, url string) bool {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// forward listens on a free local port and carries every connection to
// addr through the host's ssh connection (direct-tcpip); Cleanup closes
// the listener.
func (b *Backend) forward(host, addr string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("ssh: local port for the etcd forward: %w", err)
	}
	b.mu.Lock()
	b.listeners = append(b.listeners, ln)
	b.mu.Unlock()
	c := b.conn(host)
	go func() {
		for {
			local, err := ln.Accept()
			if err != nil {
				return // closed by Cleanup
			}
			go func() {
				defer local.Close()
				cl, err := c.client(context.Background())
				if err != nil {
					return
				}
				remote, err := cl.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer remote.Close()
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); _, _ = io.Copy(remote, local); _ = remote.Close() }()
				go func() { defer wg.Done(); _, _ = io.Copy(local, remote); _ = local.Close() }()
				wg.Wait()
			}()
		}
	}()
	return ln.Addr().String(), nil
}

// lockedBuffer is a buffer two streams may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimSpace(l.b.String())
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
