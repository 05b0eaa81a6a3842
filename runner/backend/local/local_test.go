package local

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

var ep = endpoint.Endpoint{Name: "a-0", Env: map[string]string{"EP_VAR": "from-endpoint"}}

func TestStartEnvAndExit(t *testing.T) {
	b := New()
	var out bytes.Buffer
	p, err := b.Start(context.Background(), ep, backend.Command{
		Argv: []string{"sh", "-c", "echo $EP_VAR $CMD_VAR; exit 3"}, Env: map[string]string{"CMD_VAR": "from-command"},
		Stdout: &out, Stderr: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := p.Wait(context.Background())
	if err != nil || ex.Code != 3 || ex.Signaled {
		t.Fatalf("exit %+v err %v", ex, err)
	}
	if got := strings.TrimSpace(out.String()); got != "from-endpoint from-command" {
		t.Fatalf("output %q", got)
	}
}

// Kill must reach the whole process group, SIGKILL after the grace: here
// both the shell and its child ignore SIGTERM.
func TestKillKillsTheGroup(t *testing.T) {
	b := New()
	b.Grace = 100 * time.Millisecond
	pidFile := filepath.Join(t.TempDir(), "child")
	p, err := b.Start(context.Background(), ep, backend.Command{
		Argv: []string{"sh", "-c", "trap '' TERM; sleep 600 & echo $! > " + pidFile + "; wait"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(5 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("child pid never written")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	ex, _ := p.Wait(context.Background())
	if !ex.Signaled {
		t.Errorf("exit %+v: want killed by a signal (the shell ignores TERM, so SIGKILL after the grace)", ex)
	}
	waitGone(t, child)
	if n := len(b.Running()); n != 0 {
		t.Errorf("%d processes still tracked", n)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d survived the group kill", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWaitContextKills(t *testing.T) {
	b := New()
	p, err := b.Start(context.Background(), ep, backend.Command{Argv: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := p.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("Wait did not return promptly after the context ended")
	}
}

func TestCleanupKillsEverything(t *testing.T) {
	b := New()
	var pids []int
	for i := 0; i < 3; i++ {
		if _, err := b.Start(context.Background(), ep, backend.Command{Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatal(err)
		}
	}
	pids = b.Running()
	if len(pids) != 3 {
		t.Fatalf("tracking %d", len(pids))
	}
	if err := b.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
}

func TestMissingBinary(t *testing.T) {
	_, err := New().Start(context.Background(), ep, backend.Command{Argv: []string{"no-such-tool-xyz"}})
	var mb *backend.MissingBinaryError
	if !errors.As(err, &mb) || mb.Binary != "no-such-tool-xyz" || mb.Endpoint != "a-0" {
		t.Fatalf("err %v", err)
	}
}

func TestExecReadsProcDirectly(t *testing.T) {
	out, err := New().Exec(context.Background(), ep, []string{"cat", "/proc/net/tcp", "/proc/net/tcp6"})
	if err != nil || !bytes.Contains(out, []byte("local_address")) {
		t.Fatalf("%v %q", err, out)
	}
	out, err = New().Exec(context.Background(), ep, []string{"sh", "-c", "echo $EP_VAR"})
	if err != nil || strings.TrimSpace(string(out)) != "from-endpoint" {
		t.Fatalf("%v %q", err, out)
	}
}

// A failing short command's error carries what it said on stderr; stdin
// reaches it.
func TestExecStdinAndErrors(t *testing.T) {
	b := New()
	ep := endpoint.Endpoint{Name: "a-0"}
	out, err := b.ExecStdin(context.Background(), ep, []string{"sh", "-c", "wc -l"}, []byte("1\n2\n"))
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("ExecStdin = %q %v", out, err)
	}
	_, err = b.Exec(context.Background(), ep, []string{"sh", "-c", "echo the keys did not arrive >&2; exit 1"})
	if err == nil || !strings.Contains(err.Error(), "exit status 1: the keys did not arrive") {
		t.Fatalf("err = %v; want the command's stderr in it", err)
	}
}
