package remote

import (
	"bytes"
	"os/exec"
	"syscall"
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
		f.Write([]byte(chunk))
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
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the group survived the kill script")
	}
	if err := syscall.Kill(-pgid, 0); err == nil {
		t.Fatalf("process group %d still exists", pgid)
	}
}
