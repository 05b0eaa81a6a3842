package main

import (
	"bytes"
	"context"
	"net"
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	o := &etcdOptions{listenClientURLs: []string{url}, dataDir: t.TempDir(), logLevel: "error"}
	go func() { done <- runEtcd(ctx, o, &stdout, &stderr) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), "etcd serving at "+url) {
		if time.Now().After(deadline) {
			t.Fatalf("not serving: %s %s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
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
