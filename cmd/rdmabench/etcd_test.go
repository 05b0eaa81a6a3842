package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
)

// syncBuffer is a bytes.Buffer safe to read while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestEtcdCommandServesUntilCancelled: `rdmabench etcd` serves on the URL
// given, keeps data in --data-dir, and returns when interrupted.
func TestEtcdCommandServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, dataDir, done := serveEtcdCommand(ctx, t)
	c, err := runetcd.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Put(ctx, "xferbench/g//size", "1"); err != nil {
		t.Fatal(err)
	}
	if n, err := runetcd.CountPrefix(ctx, c, "xferbench/g/"); err != nil || n != 1 {
		t.Fatalf("count %d %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "member", "wal")); err != nil {
		t.Errorf("no write-ahead log in --data-dir: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("etcd did not stop after the context was cancelled")
	}
}

// serveEtcdCommand runs `rdmabench etcd` on a free port until ctx ends
// and returns its URL once it serves, its --data-dir, and the channel its
// result comes on. The port is found free and then given to the command,
// so another test may take it in between: a start that fails on it is
// tried again on another port.
func serveEtcdCommand(ctx context.Context, t *testing.T) (url, dataDir string, done <-chan error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		url, dataDir, done, err := tryEtcdCommand(ctx, t)
		if err == nil {
			return url, dataDir, done
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("port taken, trying another: %v", err)
	}
}

func tryEtcdCommand(ctx context.Context, t *testing.T) (string, string, <-chan error, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	ctx, cancel := context.WithCancel(ctx)
	var stdout, stderr syncBuffer
	done, exited := make(chan error, 1), make(chan struct{})
	o := &etcdOptions{listenClientURLs: []string{url}, dataDir: t.TempDir(), logLevel: "error"}
	// However the test ends, the command is stopped and waited for before
	// its --data-dir is removed (cleanups run last-registered first).
	t.Cleanup(func() { cancel(); <-exited })
	go func() {
		defer close(exited)
		done <- runEtcd(ctx, o, &stdout, &stderr)
	}()
	serving := func() bool { return strings.Contains(stdout.String(), "etcd serving at "+url) }
	deadline := time.After(30 * time.Second)
	for !serving() {
		select {
		case err := <-done:
			if serving() { // it served, then stopped
				return "", "", nil, fmt.Errorf("rdmabench etcd stopped right after serving: %v", err)
			}
			return "", "", nil, fmt.Errorf("rdmabench etcd ended before serving: %v\n%s%s", err, stdout.String(), stderr.String())
		case <-deadline:
			t.Fatalf("not serving after 30 s: %s %s", stdout.String(), stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return url, o.dataDir, done, nil
}

// A malformed URL flag is a usage error (exit 2) naming the value.
func TestEtcdCommandBadURLExit2(t *testing.T) {
	for _, args := range [][]string{
		{"etcd", "--listen-client-urls", "foo"},
		{"etcd", "--listen-client-urls", "http://127.0.0.1:0", "--advertise-client-urls", "10.0.0.1"},
		{"etcd", "--listen-client-urls", "http://127.0.0.1:0", "--listen-peer-url", "nohost"},
	} {
		var stdout, stderr bytes.Buffer
		code := runWith(args, nil, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "want scheme://host:port") || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
}
