package remote

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWrapCommand(t *testing.T) {
	got := Wrap([]string{"ib_write_bw", "-d", "rxe0", "a b"}, map[string]string{"UCX_TLS": "rc,tcp", "Z": "it's"})
	want := `setsid env UCX_TLS=rc,tcp 'Z=it'\''s' ib_write_bw -d rxe0 'a b' & p=$!; echo "@@rdmabench-pgid $p" >&2; wait $p`
	if got != want {
		t.Fatalf("Wrap:\n got %s\nwant %s", got, want)
	}
}

func TestPGIDFilter(t *testing.T) {
	var out bytes.Buffer
	var pgid int
	f := &PGIDFilter{Out: &out, Found: func(n int) { pgid = n }}
	for _, chunk := range []string{"err one\n@@rdmabench-", "pgid 4242\nerr ", "two\npartial"} {
		_, _ = f.Write([]byte(chunk))
	}
	f.Flush()
	if pgid != 4242 || out.String() != "err one\nerr two\npartial" {
		t.Fatalf("pgid %d out %q", pgid, out.String())
	}
}

func TestKillScriptEndsAGroupThatIgnoresTERM(t *testing.T) {
	// A group whose leader ignores SIGTERM is SIGKILLed after the grace.
	cmd := exec.Command("sh", "-c", Wrap([]string{"sh", "-c", "trap '' TERM; sleep 30"}, nil))
	var stderr bytes.Buffer
	pgidc := make(chan int, 1)
	cmd.Stderr = &PGIDFilter{Out: &stderr, Found: func(n int) { pgidc <- n }}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pgid int
	select {
	case pgid = <-pgidc:
	case <-time.After(5 * time.Second):
		t.Fatal("no pgid line")
	}
	time.Sleep(100 * time.Millisecond) // let the trap be set
	if out, err := exec.Command("sh", "-c", KillScript(pgid, 300*time.Millisecond)).CombinedOutput(); err != nil {
		t.Fatalf("kill script: %v %s", err, out)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		_ = err // how it ended is read below
	case <-time.After(5 * time.Second):
		t.Fatal("the group survived the kill script")
	}
	// Members may linger as zombies where PID 1 does not reap orphans (as
	// in some containers); a zombie runs nothing.
	deadline := time.Now().Add(5 * time.Second)
	for liveMembers(pgid) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has running members", pgid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// liveMembers counts the processes of group pgid that are not zombies,
// from /proc/PID/stat (state is field 3, pgrp field 5).
func liveMembers(pgid int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// The command name (field 2) may hold spaces: read after its ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}

// An error names a short command whole and a long script by its start and
// size, so the error's cause is not buried under it.
func TestBrief(t *testing.T) {
	if got := Brief([]string{"ib_write_bw", "-d", "rxe0"}); got != "ib_write_bw -d rxe0" {
		t.Errorf("short: %q", got)
	}
	script := "echo '@@rdmabench-section facts'\n(\n" + strings.Repeat("echo x\n", 40) + ")"
	got := Brief([]string{"sh", "-c", script})
	if strings.Contains(got, "\n") || !strings.HasPrefix(got, "sh -c 'echo '") || !strings.HasSuffix(got, "… (330 bytes)") {
		t.Errorf("long: %q", got)
	}
}
