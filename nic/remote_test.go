package nic

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestDumpReadsPopulatedGIDsOnly: a full rxe table (1,024 entries, a
// populated one past a hole) is dumped as discovery reads it locally, and
// the attributes of the empty entries are never opened: each is a FIFO
// here, which would block the script until its bound.
func TestDumpReadsPopulatedGIDsOnly(t *testing.T) {
	root := t.TempDir()
	if out, err := exec.Command("cp", "-a", tree("rxe-vm-rails")+"/.", root).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	port := filepath.Join(root, "sys/class/infiniband/rxe1/ports/1")
	// Entry 2 moves to 40, leaving a hole.
	for _, f := range []string{"gids", "gid_attrs/types", "gid_attrs/ndevs"} {
		if err := os.Rename(filepath.Join(port, f, "2"), filepath.Join(port, f, "40")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1024 {
		g := filepath.Join(port, "gids", strconv.Itoa(i))
		if _, err := os.Stat(g); err == nil {
			continue
		}
		if err := os.WriteFile(g, []byte(zeroGID+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{"types", "ndevs"} {
			if err := syscall.Mkfifo(filepath.Join(port, "gid_attrs", a, strconv.Itoa(i)), 0o444); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", strings.Replace(DumpScript, "cd /", "cd "+root, 1))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // grep, blocked on a FIFO, too
	cmd.WaitDelay = time.Second
	dump, err := cmd.Output()
	if err != nil || ctx.Err() != nil {
		t.Fatalf("dump: %v (%v): an empty entry's attribute was opened?", err, ctx.Err())
	}
	if n := strings.Count(string(dump), "/gids/"); n != 6 {
		t.Errorf("%d GID lines; want the 6 populated (2 on rxe0, 4 on rxe1)", n)
	}
	got, err := DiscoverDump(dump, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Discover(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	got.Root, want.Root = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("remote discovery differs:\n%+v\n%+v", got, want)
	}
	if g := want.Devices[1].Ports[0].GIDs; len(g) != 4 || g[3].Index != 40 || g[3].Type == "" || g[3].Netdev == "" {
		t.Errorf("rxe1's GIDs %+v; want 4, the last at index 40 with its type and netdev", g)
	}
}
