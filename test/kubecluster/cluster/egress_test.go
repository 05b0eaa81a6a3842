package cluster

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEgressProxy: a CONNECT to a joined kubelet's reported address
// reaches the address it is routed to; an unknown address is dialled as
// it is; what is not a CONNECT is refused; the apiserver's configuration
// names the socket.
func TestEgressProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "kubelet") }))
	defer srv.Close()
	dir, err := os.MkdirTemp("", "egress")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "egress.sock")
	p, cfg, err := startEgressProxy(sock, map[string]string{"10.9.0.1:10250": srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	doc, _ := os.ReadFile(cfg)
	if !strings.Contains(string(doc), "name: cluster") || !strings.Contains(string(doc), "udsName: "+sock) {
		t.Errorf("egress selector configuration:\n%s", doc)
	}
	get := func(target, request string) string {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, request, target)
		br := bufio.NewReader(c)
		status, _ := br.ReadString('\n')
		if !strings.Contains(status, " 200 ") {
			return strings.TrimSpace(status)
		}
		_, _ = br.ReadString('\n') // the empty line ending the answer
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		b, _ := io.ReadAll(br)
		return string(b)
	}
	const connect = "CONNECT %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	if got := get("10.9.0.1:10250", connect); !strings.HasSuffix(got, "kubelet") {
		t.Errorf("routed CONNECT: %q", got)
	}
	if got := get(srv.Listener.Addr().String(), connect); !strings.HasSuffix(got, "kubelet") {
		t.Errorf("direct CONNECT: %q", got)
	}
	if got := get("/", "GET %s HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.Contains(got, "400") {
		t.Errorf("GET to the proxy: %q", got)
	}
	if got := get("127.0.0.1:1", connect); !strings.Contains(got, "502") {
		t.Errorf("CONNECT to a closed port: %q", got)
	}
	if err := p.close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := os.Stat(sock); err == nil {
		t.Errorf("the socket is left after close")
	}
}
