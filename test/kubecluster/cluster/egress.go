package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// egressProxy is the apiserver's way to the kubelets of joined machines
// (the soft-RoCE VMs): their kubelets report their data-network address
// (10.9.0.1:10250), which this host cannot route to, so the apiserver's
// "cluster" egress (--egress-selector-config-file, the mechanism
// konnectivity uses for control planes that cannot reach their nodes)
// sends every connection to a node through this HTTP CONNECT proxy on a
// unix socket, which dials the address this host reaches the kubelet by
// (a QEMU port forward). Addresses it does not know are dialled as they
// are (loopback node agents).
type egressProxy struct {
	sock   string
	routes map[string]string // kubelet address → where to dial it
	l      net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

// startEgressProxy listens on sock and writes the apiserver's egress
// selector configuration beside it; it returns the configuration's path.
func startEgressProxy(sock string, routes map[string]string) (*egressProxy, string, error) {
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, "", err
	}
	p := &egressProxy{sock: sock, routes: routes, l: l, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	cfg := filepath.Join(filepath.Dir(sock), "egress-selector.yaml")
	doc := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, sock)
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		p.close()
		return nil, "", err
	}
	return p, cfg, nil
}

func (p *egressProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.handle(c) }()
	}
}

// handle answers one CONNECT and copies bytes both ways until either side
// closes.
func (p *egressProxy) handle(c net.Conn) {
	p.track(c, true)
	defer p.track(c, false)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil || req.Method != http.MethodConnect {
		fmt.Fprint(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	target := req.Host
	if to, ok := p.routes[target]; ok {
		target = to
	}
	up, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	p.track(up, true)
	defer p.track(up, false)
	defer up.Close()
	fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

func (p *egressProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

// close stops listening, closes every open tunnel and waits for its
// goroutines (bounded: closing the connections ends their copies).
func (p *egressProxy) close() error {
	err := p.l.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		err = errors.Join(err, errors.New("egress proxy: tunnels still open after 10 s"))
	}
	_ = os.Remove(p.sock)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
