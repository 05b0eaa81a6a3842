package ssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestAgentAuth: with no keyFile the backend signs with the ssh agent.
func TestAgentAuth(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	ring := agent.NewKeyring()
	if err := ring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(ring, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	t.Setenv("HOME", t.TempDir()) // no ~/.ssh/id_* keys

	r := newRig(t, nil)
	srv := startServer(t, signer.PublicKey())
	h := r.host
	h.KeyFile = ""
	h.Address, h.Port = splitAddr(t, srv.addr)
	h.InsecureIgnoreHostKey = true
	b, _ := New([]scenarios.Host{h}, Options{})
	defer func() { _ = b.Cleanup(ctxT(t, 5*time.Second)) }()
	out, err := b.Exec(ctxT(t, 5*time.Second), r.ep, []string{"echo", "via agent"})
	if err != nil || string(out) != "via agent\n" {
		t.Fatalf("agent auth: %q %v", out, err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	b2, _ := New([]scenarios.Host{h}, Options{})
	if _, err := b2.Exec(ctxT(t, 5*time.Second), r.ep, []string{"true"}); err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("no key, no agent: %v", err)
	}
}

// TestProvisionChecksDevice: the in-process server runs on this machine,
// whose sysfs has no RDMA device (or not this one).
func TestProvisionChecksDevice(t *testing.T) {
	r := newRig(t, nil)
	ep := r.ep
	ep.Device = "mlx5_77"
	_, err := r.b.Provision(ctxT(t, 10*time.Second), []endpoint.Endpoint{ep})
	if err == nil || !strings.Contains(err.Error(), `ssh node1: endpoint a-0:`) || !strings.Contains(err.Error(), "mlx5_77") {
		t.Fatalf("Provision with a missing device: %v", err)
	}
	ep.Device = "auto"
	if _, err := r.b.Provision(ctxT(t, 10*time.Second), []endpoint.Endpoint{ep}); err != nil {
		t.Fatalf("device auto on a host without RDMA must not fail: %v", err)
	}
}

func splitAddr(t *testing.T, addr string) (string, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	var p int
	for _, c := range port {
		p = p*10 + int(c-'0')
	}
	return host, p
}

// A keyFile that does not exist names the host, the path and where it was
// looked for, and how to fix it.
func TestMissingKeyFileSaysHowToFix(t *testing.T) {
	_, err := authMethods(scenarios.Host{Name: "node1", KeyFile: "no/such/id_ed25519"})
	if err == nil {
		t.Fatal("want an error for a missing key file")
	}
	for _, want := range []string{"host node1", "keyFile no/such/id_ed25519 does not exist", "relative to", "hosts[].keyFile"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
