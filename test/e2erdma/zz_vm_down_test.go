package e2erdma

// This file's name sorts last on purpose: go test runs a package's tests in
// file order, and these tests take the server VM away for good (vm2's
// socket network cannot reconnect to a new vm1).

import (
	"strings"

	"testing"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// TestServerVMDown: a server VM that hangs, then dies, mid-test. Every
// wait ends within its bound with an error naming the host; nothing hangs.
func TestServerVMDown(t *testing.T) {
	needVMs(t)
	b, _ := newBackend(t)
	eps, _ := provision(t, b)
	args := []string{"ib_write_bw", "-d", "rxe0", "-x", "1", "-n", "1000000", "-s", "65536"}
	srv := start(t, b, eps[0], nil, args...)
	waitPort(t, b, eps[0], 18515)
	cli := start(t, b, eps[1], nil, append(args, eps[0].Address)...)
	time.Sleep(3 * time.Second)

	// A hung host: its connections stay open but nothing answers.
	pair.VMs[0].Freeze()
	begin := time.Now()
	_, err := b.Exec(timeout(t, 8*time.Second), eps[0], []string{"true"})
	if err == nil || time.Since(begin) > 20*time.Second {
		t.Fatalf("Exec on a frozen VM: %v after %v; want an error within the 8 s bound", err, time.Since(begin))
	}
	t.Logf("frozen vm1: %v after %v", err, time.Since(begin).Round(time.Millisecond))

	// The host dies: the client's leg is bounded by its own timeout.
	pair.VMs[0].Thaw()
	pair.VMs[0].Kill()
	begin = time.Now()
	ce, cerr := cli.p.Wait(timeout(t, 15*time.Second))
	if time.Since(begin) > 30*time.Second {
		t.Fatalf("client wait took %v", time.Since(begin))
	}
	t.Logf("client after vm1 died: exit %+v err %v", ce, cerr)
	_, serr := srv.p.Wait(timeout(t, 15*time.Second))
	if serr == nil {
		t.Errorf("server on a dead VM ended without error")
	}
	begin = time.Now()
	_, err = b.Start(timeout(t, 20*time.Second), eps[0], backend.Command{Argv: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "ssh vm1 (127.0.0.1:42201)") || time.Since(begin) > 25*time.Second {
		t.Fatalf("Start on a dead VM: %v after %v; want a bounded error naming vm1", err, time.Since(begin))
	}
	t.Logf("dead vm1: %v after %v", err, time.Since(begin).Round(time.Millisecond))
	assertNoLeftovers(t, b, [2]endpoint.Endpoint{eps[1], eps[1]})
}
