package etcd

import (
	"context"
	"os"
	"testing"
	"time"
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
