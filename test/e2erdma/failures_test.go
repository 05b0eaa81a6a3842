package e2erdma

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdmabench/rdmabench/runner/backend"
	rssh "github.com/rdmabench/rdmabench/runner/backend/ssh"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// TestFailuresOnVMs: what a wrong scenario or a broken host does, on the
// real VMs. Each failure is a clear, bounded error, and nothing is left
// running.
func TestFailuresOnVMs(t *testing.T) {
	needVMs(t)

	t.Run("wrong device name", func(t *testing.T) {
		b, eps := newBackend(t)
		eps[0].Device = "rxe9"
		_, err := b.Provision(timeout(t, 60*time.Second), eps[:1])
		want := `ssh vm1: endpoint server-0: RDMA device "rxe9" not found; this host has rxe0 port 1 ACTIVE`
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("Provision err = %v\nwant %s…", err, want)
		}
		// The tool itself, given the wrong name, fails at once.
		r := start(t, b, endpoint.Endpoint{Name: "server-0", Host: "vm1"}, nil, "ib_write_bw", "-d", "rxe9", "-x", "1")
		exit := r.wait(t, 60*time.Second)
		if exit.Code != 1 || !strings.Contains(r.err.String()+r.out.String(), "IB device rxe9 not found") {
			t.Fatalf("ib_write_bw -d rxe9: exit %d\n%s%s", exit.Code, r.out, r.err)
		}
		saveFixture(t, "error_wrong_device_server.txt", append(r.out.Bytes(), r.err.Bytes()...))
	})

	t.Run("wrong GID index", func(t *testing.T) {
		b, eps := newBackend(t)
		five := 5
		eps[0].GIDIndex = &five
		_, err := b.Provision(timeout(t, 60*time.Second), eps[:1])
		want := "ssh vm1: endpoint server-0: GID index 5 of rxe0 port 1 is empty; populated: 0 (RoCE v2 fe80:0000:0000:0000:5054:00ff:fe09:0001), 1 (RoCE v2 0000:0000:0000:0000:0000:ffff:0a09:0001); the RoCE v2 IPv4 GID is 1"
		if err == nil || err.Error() != want {
			t.Fatalf("Provision err = %v\nwant %s", err, want)
		}
		// Real perftest with that index: it must end (by itself or by the
		// harness's bound) and leave nothing behind.
		eps, _ = provision(t, b)
		args := []string{"ib_write_bw", "-d", "rxe0", "-x", "5", "-n", "100"}
		srv := start(t, b, eps[0], nil, args...)
		srvDone := make(chan struct{})
		var se backend.Exit
		var serr error
		go func() { se, serr = srv.p.Wait(timeout(t, 60*time.Second)); close(srvDone) }()
		waitPortOr(t, b, eps[0], 18515, srvDone)
		cli := start(t, b, eps[1], nil, append(args, eps[0].Address)...)
		begin := time.Now()
		ce, cerr := cli.p.Wait(timeout(t, 30*time.Second))
		<-srvDone
		if time.Since(begin) > 50*time.Second {
			t.Fatalf("took %v; the bound is 40 s", time.Since(begin))
		}
		if (ce.Code == 0 && cerr == nil) || (se.Code == 0 && serr == nil) {
			t.Fatalf("ib_write_bw -x 5 succeeded? client %+v %v server %+v %v\n%s%s", ce, cerr, se, serr, cli.out, cli.err)
		}
		t.Logf("-x 5: client exit %d (%v), server exit %d (%v); client stderr: %q", ce.Code, cerr, se.Code, serr, lastLine(cli.err.String()))
		saveFixture(t, "error_wrong_gid_client.txt", append(cli.out.Bytes(), cli.err.Bytes()...))
		assertNoLeftovers(t, b, eps)
	})

	t.Run("timeout kills the remote process group", func(t *testing.T) {
		// A server that never gets its client, under a shell with a second
		// child: the bound ends it, and neither survives on the VM.
		b, eps := newBackend(t)
		r := start(t, b, eps[0], nil, "sh", "-c", "sleep 597 & ib_write_bw -d rxe0 -x 1 -p 18600; wait")
		waitPort(t, b, eps[0], 18600)
		begin := time.Now()
		exit, err := r.p.Wait(timeout(t, 2*time.Second))
		if err == nil || !strings.Contains(err.Error(), "deadline") || !exit.Signaled || time.Since(begin) > 20*time.Second {
			t.Fatalf("Wait past its bound: exit %+v err %v after %v; want killed at the deadline", exit, err, time.Since(begin))
		}
		// [s]: the pattern must not match the shell that runs pgrep.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			out, err := b.Exec(timeout(t, 20*time.Second), eps[0], []string{"sh", "-c", "pgrep -f '[s]leep 597|[i]b_write_bw' || true"})
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.TrimSpace(string(out)); s == "" {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("left running on vm1 after the timeout: %s", s)
			}
		}
	})

	t.Run("host key mismatch", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "known_hosts")
		raw, _, _ := ed25519.GenerateKey(rand.Reader)
		pub, _ := ssh.NewPublicKey(raw)
		_ = os.WriteFile(other, []byte(knownhosts.Line([]string{"[127.0.0.1]:42201"}, pub)+"\n"), 0o600)
		hosts := pair.Hosts()
		hosts[0].KnownHostsFile = other
		b, err := rssh.New(hosts, rssh.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = b.Cleanup(context.Background()) }()
		_, err = b.Provision(timeout(t, 60*time.Second), []endpoint.Endpoint{{Name: "server-0", Host: "vm1"}})
		if err == nil {
			t.Fatal("a VM with an unexpected host key was accepted")
		}
		for _, want := range []string{"HOST KEY MISMATCH for host vm1 (127.0.0.1:42201)", ssh.FingerprintSHA256(pub), "ssh-keygen -R [127.0.0.1]:42201", "refused"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
		t.Logf("refused: %v", err)
	})
}

func provision(t *testing.T, b *rssh.Backend) ([2]endpoint.Endpoint, error) {
	eps := [2]endpoint.Endpoint{
		{Name: "server-0", Pool: "server", Host: "vm1", Device: "rxe0"},
		{Name: "client-0", Pool: "client", Host: "vm2", Device: "rxe0"},
	}
	got, err := b.Provision(timeout(t, 60*time.Second), eps[:])
	if err != nil {
		t.Fatal(err)
	}
	copy(eps[:], got)
	return eps, nil
}

// assertNoLeftovers checks that no benchmark process runs on the VMs.
func assertNoLeftovers(t *testing.T, b backend.Backend, eps [2]endpoint.Endpoint) {
	for _, ep := range eps {
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, _ := b.Exec(timeout(t, 20*time.Second), ep, []string{"sh", "-c", "pgrep -l 'ib_|rping|ucx_perftest' || true"})
			if strings.TrimSpace(string(out)) == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s still runs: %s", ep.Host, out)
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
