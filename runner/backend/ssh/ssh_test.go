package ssh

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

type rig struct {
	srv  *testServer
	host scenarios.Host
	b    *Backend
	ep   endpoint.Endpoint
	dir  string
}

// newRig starts a server and a backend whose known_hosts holds knownKey
// for it (the server's own key when nil).
func newRig(t *testing.T, knownKey ssh.PublicKey) *rig {
	dir := t.TempDir()
	keyFile, pub := writeKey(t, dir)
	srv := startServer(t, pub)
	if knownKey == nil {
		knownKey = srv.hostKey.PublicKey()
	}
	kh := filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, knownKey)
	if err := os.WriteFile(kh, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(srv.addr)
	p, _ := strconv.Atoi(port)
	h := scenarios.Host{Name: "node1", Address: host, Port: p, User: "tester", KeyFile: keyFile,
		KnownHostsFile: kh, DataAddress: "192.168.7.1"}
	b, err := New([]scenarios.Host{h}, Options{DialTimeout: 2 * time.Second, HandshakeTimeout: 2 * time.Second, KillGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Cleanup(context.Background()) })
	return &rig{srv: srv, host: h, b: b, ep: endpoint.Endpoint{Name: "a-0", Host: "node1"}, dir: dir}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestProvisionFillsDataAddress(t *testing.T) {
	r := newRig(t, nil)
	eps, err := r.b.Provision(ctxT(t, 5*time.Second), []endpoint.Endpoint{r.ep})
	if err != nil {
		t.Fatal(err)
	}
	if eps[0].Address != "192.168.7.1" {
		t.Fatalf("Address = %q; want the data address", eps[0].Address)
	}
	if _, err := r.b.Provision(ctxT(t, time.Second), []endpoint.Endpoint{{Name: "x", Host: "nope"}}); err == nil ||
		!strings.Contains(err.Error(), `ssh host "nope" is not in the scenario's hosts`) {
		t.Fatalf("unknown host: %v", err)
	}
}

func TestStartStreamsOutputAndExitCode(t *testing.T) {
	r := newRig(t, nil)
	cases := []struct {
		argv           []string
		env            map[string]string
		stdout, stderr string
		code           int
	}{
		{[]string{"echo", "hello world"}, nil, "hello world\n", "", 0},
		{[]string{"sh", "-c", `echo "$A|$B"; echo oops >&2; exit 3`}, map[string]string{"A": "it's", "B": "x y"}, "it's|x y\n", "oops\n", 3},
		{[]string{"printf", "%s\\n", "a'b", "$HOME", "`x`"}, nil, "a'b\n$HOME\n`x`\n", "", 0},
		{[]string{"no-such-tool-xyz"}, nil, "", "", 127},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		p, err := r.b.Start(ctxT(t, 5*time.Second), r.ep, backend.Command{Argv: c.argv, Env: c.env, Stdout: &out, Stderr: &errb})
		if err != nil {
			t.Fatal(err)
		}
		exit, err := p.Wait(ctxT(t, 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != c.stdout || exit.Code != c.code || exit.Signaled {
			t.Errorf("%q: stdout %q code %d; want %q %d", c.argv, out.String(), exit.Code, c.stdout, c.code)
		}
		if c.code != 127 && errb.String() != c.stderr {
			t.Errorf("%q: stderr %q; want %q", c.argv, errb.String(), c.stderr)
		}
		if strings.Contains(errb.String(), remote.PGIDMarker) {
			t.Errorf("pgid marker leaked into stderr: %q", errb.String())
		}
	}
}

// startTree starts a command that leaves a grandchild (sleep) whose pid it
// writes to a file, and returns the process and that pid.
func startTree(t *testing.T, r *rig) (backend.Process, int) {
	pidFile := filepath.Join(r.dir, "child.pid")
	os.Remove(pidFile)
	p, err := r.b.Start(ctxT(t, 5*time.Second), r.ep, backend.Command{Argv: []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return p, pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the command never wrote its child's pid")
	return nil, 0
}

func gone(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if strings.Contains(string(b), ") Z ") {
			return true // a zombie awaiting its reaper is dead
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func TestKillEndsTheWholeGroup(t *testing.T) {
	r := newRig(t, nil)
	p, child := startTree(t, r)
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	exit, err := p.Wait(ctxT(t, 5*time.Second))
	if err != nil || !exit.Signaled || exit.Code != -1 {
		t.Fatalf("after Kill: %+v %v; want signaled, code -1", exit, err)
	}
	if !gone(child) {
		t.Fatalf("grandchild %d survived Kill", child)
	}
}

func TestWaitContextKills(t *testing.T) {
	r := newRig(t, nil)
	p, child := startTree(t, r)
	start := time.Now()
	_, err := p.Wait(ctxT(t, 300*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("Wait err = %v; want the deadline", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("Wait took %v after its deadline", time.Since(start))
	}
	if !gone(child) {
		t.Fatalf("grandchild %d survived the cancelled Wait", child)
	}
}

func TestCleanupKillsEverything(t *testing.T) {
	r := newRig(t, nil)
	_, child := startTree(t, r)
	if err := r.b.Cleanup(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if !gone(child) {
		t.Fatalf("grandchild %d survived Cleanup", child)
	}
	if len(r.b.conns) != 0 {
		t.Fatal("Cleanup left connections open")
	}
}

func TestExec(t *testing.T) {
	r := newRig(t, nil)
	out, err := r.b.Exec(ctxT(t, 5*time.Second), r.ep, []string{"sh", "-c", "echo 0A; echo warn >&2"})
	if err != nil || string(out) != "0A\n" {
		t.Fatalf("Exec = %q %v", out, err)
	}
	_, err = r.b.Exec(ctxT(t, 5*time.Second), r.ep, []string{"sh", "-c", "echo bad thing >&2; exit 2"})
	if err == nil || !strings.Contains(err.Error(), "exited with 2: bad thing") || !strings.Contains(err.Error(), "ssh node1") {
		t.Fatalf("failing Exec err = %v", err)
	}
	// Many commands share one connection.
	for i := 0; i < 20; i++ {
		if _, err := r.b.Exec(ctxT(t, 5*time.Second), r.ep, []string{"true"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.b.conns["node1"].clients); n != 1 {
		t.Fatalf("%d connections for 21 commands; want 1", n)
	}
}

// ExecStdin feeds the command's stdin, and its error names the command,
// never the input.
func TestExecStdin(t *testing.T) {
	r := newRig(t, nil)
	secret := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n")
	out, err := r.b.ExecStdin(ctxT(t, 5*time.Second), r.ep, []string{"sh", "-c", "wc -l"}, secret)
	if err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Fatalf("ExecStdin = %q %v; want the 3 lines read", out, err)
	}
	_, err = r.b.ExecStdin(ctxT(t, 5*time.Second), r.ep, []string{"sh", "-c", "cat >/dev/null; echo refused >&2; exit 3"}, secret)
	if err == nil || !strings.Contains(err.Error(), "exited with 3: refused") || strings.Contains(err.Error(), "PRIVATE") {
		t.Fatalf("failing ExecStdin err = %v", err)
	}
	// A command that succeeds without reading all its stdin (more than the
	// channel's window) succeeded, as on the local backend.
	if out, err := r.b.ExecStdin(ctxT(t, 5*time.Second), r.ep, []string{"echo", "ok"}, bytes.Repeat([]byte("x"), 8<<20)); err != nil || string(out) != "ok\n" {
		t.Fatalf("ExecStdin of a command that ignores its stdin = %q %v", out, err)
	}
	// A command that never reads its stdin nor ends: bounded by ctx.
	start := time.Now()
	if _, err := r.b.ExecStdin(ctxT(t, 300*time.Millisecond), r.ep, []string{"sleep", "30"}, bytes.Repeat([]byte("x"), 8<<20)); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("ExecStdin past its ctx: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("ExecStdin took %v after a 300ms ctx", d)
	}
}

func TestHostKeyMismatchRefused(t *testing.T) {
	r := newRig(t, newKey(t).PublicKey())
	_, err := r.b.Provision(ctxT(t, 5*time.Second), []endpoint.Endpoint{r.ep})
	if err == nil {
		t.Fatal("a host with the wrong key was accepted")
	}
	msg := err.Error()
	for _, want := range []string{"HOST KEY MISMATCH for host node1", ssh.FingerprintSHA256(r.srv.hostKey.PublicKey()), "ssh-keygen -R", "known_hosts:1", "refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("mismatch message lacks %q:\n%s", want, msg)
		}
	}
}

func TestUnknownHostRefused(t *testing.T) {
	r := newRig(t, nil)
	_ = os.WriteFile(r.host.KnownHostsFile, nil, 0o600)
	_, err := r.b.Provision(ctxT(t, 5*time.Second), []endpoint.Endpoint{r.ep})
	if err == nil || !strings.Contains(err.Error(), "is not in "+r.host.KnownHostsFile) || !strings.Contains(err.Error(), "ssh-keyscan -p") {
		t.Fatalf("unknown host: %v", err)
	}
	r.b.hosts["node1"] = func(h scenarios.Host) scenarios.Host { h.InsecureIgnoreHostKey = true; return h }(r.host)
	r.b.conns = map[string]*hostConn{}
	if _, err := r.b.Provision(ctxT(t, 5*time.Second), []endpoint.Endpoint{r.ep}); err != nil {
		t.Fatalf("insecureIgnoreHostKey: %v", err)
	}
}

func TestBoundedFailures(t *testing.T) {
	r := newRig(t, nil)
	// A port nobody listens on.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// A server that accepts and never speaks.
	mute, _ := net.Listen("tcp", "127.0.0.1:0")
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cases := []struct {
		port int
		want string
	}{
		{closed, "connect"},
		{mute.Addr().(*net.TCPAddr).Port, "handshake"},
	}
	for _, c := range cases {
		h := r.host
		h.Port = c.port
		h.InsecureIgnoreHostKey = true
		b, _ := New([]scenarios.Host{h}, Options{DialTimeout: time.Second, HandshakeTimeout: time.Second})
		start := time.Now()
		_, err := b.Exec(ctxT(t, 20*time.Second), r.ep, []string{"true"})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ssh node1 (127.0.0.1:") {
			t.Errorf("port %d: err = %v; want a %s error naming the host", c.port, err, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("port %d: took %v; want about the 1 s bound", c.port, d)
		}
	}
	// Wrong credentials.
	h := r.host
	h.KeyFile, _ = writeKey(t, t.TempDir())
	b, _ := New([]scenarios.Host{h}, Options{})
	if _, err := b.Exec(ctxT(t, 5*time.Second), r.ep, []string{"true"}); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("wrong key: %v", err)
	}
}

// The fingerprint of an ssh host: the in-process server runs on this
// machine, so its kernel is this one's (and it has no RDMA device here).
func TestFingerprint(t *testing.T) {
	r := newRig(t, nil)
	want, err := exec.Command("uname", "-r").Output()
	if err != nil {
		t.Skip(err)
	}
	fp := r.b.Fingerprint(ctxT(t, 20*time.Second), r.ep)
	if fp["kernel"] != strings.TrimSpace(string(want)) {
		t.Fatalf("Fingerprint = %v, want kernel %q", fp, strings.TrimSpace(string(want)))
	}
}
