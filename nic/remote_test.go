package nic

import (
	"context"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// TestDiscoverRemote runs the dump script with the local sh against each
// recorded tree (chrooted by rewriting "cd /") and checks that remote
// discovery finds what local discovery finds.
func TestDiscoverRemote(t *testing.T) {
	for _, name := range treeNames(t) {
		root := tree(name)
		run := func(ctx context.Context, argv []string) ([]byte, error) {
			script := strings.Replace(argv[2], "cd /", "cd "+root, 1)
			if argv[2] == TopoScript {
				return exec.CommandContext(ctx, "sh", "-c", "cat "+root+"/"+TopoFile+" 2>/dev/null; true").Output()
			}
			return exec.CommandContext(ctx, "sh", "-c", script).Output()
		}
		got, err := DiscoverRemote(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Discover(Options{Root: root})
		got.Root, want.Root = "", ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: remote discovery differs:\n%+v\n%+v", name, got, want)
		}
	}
}

func TestUnpackRejectsEscapes(t *testing.T) {
	for _, bad := range []string{"/etc/passwd:x", "sys/../../x:y", "../sys/x:y", "sys//a:b"} {
		if err := Unpack(bad+"\n", t.TempDir()); err == nil {
			t.Errorf("Unpack(%q) accepted", bad)
		}
	}
}

func FuzzUnpack(f *testing.F) {
	f.Add("sys/class/infiniband/rxe0/ports/1/rate:2.5 Gb/sec (1X SDR)\n")
	f.Fuzz(func(t *testing.T, s string) { _ = Unpack(s, t.TempDir()) })
}
