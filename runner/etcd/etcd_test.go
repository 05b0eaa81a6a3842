package etcd

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestStartPutDeleteClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.tempDir
	c, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"xferbench/g//size", "xferbench/g//rank/0", "xferbench/g/barrier/sync/1/0", "xferbench/other//size"} {
		if _, err := c.Put(ctx, k, "1"); err != nil {
			t.Fatal(err)
		}
	}
	n, err := DeletePrefix(ctx, c, "xferbench/g/")
	if err != nil || n != 3 {
		t.Fatalf("deleted %d, %v; want 3", n, err)
	}
	if left, _ := CountPrefix(ctx, c, "xferbench/"); left != 1 {
		t.Fatalf("%d keys left, want 1 (the other group)", left)
	}
	c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("data dir %s still there after Close", dir)
	}
}

// ClearPrefix revokes the leases the prefix's keys hold (and with them
// every key they hold, inside the prefix or not) and deletes the rest;
// another prefix is untouched.
func TestClearPrefix(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rank, _ := c.Grant(ctx, 30)
	lock, _ := c.Grant(ctx, 10)
	for k, l := range map[string]clientv3.LeaseID{
		"xferbench/g//rank/0": rank.ID, "xferbench/g//lock/694d9a": lock.ID, "xferbench/g//size": 0,
		"xferbench/g/barrier/start_barrier/0/0": 0, "xferbench/other//size": 0,
	} {
		var opts []clientv3.OpOption
		if l != 0 {
			opts = append(opts, clientv3.WithLease(l))
		}
		if _, err := c.Put(ctx, k, "v", opts...); err != nil {
			t.Fatal(err)
		}
	}
	keys, leases, err := ClearPrefix(ctx, c, "xferbench/g/")
	if err != nil || keys != 4 || leases != 2 {
		t.Fatalf("ClearPrefix: %d keys, %d leases, %v; want 4, 2", keys, leases, err)
	}
	if n, _ := CountPrefix(ctx, c, "xferbench/g/"); n != 0 {
		t.Errorf("%d keys left under the prefix", n)
	}
	if n, _ := CountPrefix(ctx, c, "xferbench/other/"); n != 1 {
		t.Errorf("another group's key was touched (%d left)", n)
	}
	ls, _ := c.Leases(ctx)
	if len(ls.Leases) != 0 {
		t.Errorf("leases left: %v", ls.Leases)
	}
	if _, _, err := ClearPrefix(ctx, c, ""); err == nil {
		t.Error("an empty prefix must be refused")
	}
}

// run --etcd takes http://HOST:PORT and nothing else, each refusal saying
// what to write.
func TestCheckClientURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://10.0.0.5:2379":      "",
		"http://[fd00::5]:2379/":    "",
		"10.0.0.5:2379":             "not a URL",
		"ftp://x:1":                 "only http://",
		"https://x:2379":            "only http://",
		"http://x":                  "has no port: want http://x:2379",
		"http://x:2379/v3?x=1":      "no path, query or user",
		"http://a:2379,http://b:23": "",
	} {
		err := CheckClientURL(in)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v; want %q", in, err, want)
		}
	}
}
