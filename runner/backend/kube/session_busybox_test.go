package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The session under busybox sh: no mktemp (the /dev/shm loop), no GNU
// sed (the read loop, pre), a UTF-8 locale; long multibyte lines from
// concurrent commands must come back whole, codes right.
func TestSessionUnderBusybox(t *testing.T) {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox")
	}
	dir := t.TempDir()
	for _, a := range []string{"sh", "mkdir", "rm", "sleep", "printf", "cat"} {
		if err := os.Symlink(bb, filepath.Join(dir, a)); err != nil {
			t.Fatal(err)
		}
	}
	open := shellOpener([]string{"PATH=" + dir, "LC_ALL=C.UTF-8", "LANG=C.UTF-8"}, filepath.Join(dir, "sh"), "-c")
	s, err := openSession(context.Background(), target{pod: "p"}, open)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	line := strings.Repeat("\u00e9\U0001F600", 700) // 700*6 = 4200 bytes
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			var out, errb syncBuffer
			script := fmt.Sprintf("i=0; while [ $i -lt 3 ]; do echo %d%s; echo %d%s >&2; i=$((i+1)); done; exit %d", i, line, i, line, i+3)
			code, err := s.run(context.Background(), script, i%2 == 0, &out, &errb)
			want := strings.Repeat(fmt.Sprintf("%d%s\n", i, line), 3)
			if err != nil || code != i+3 || out.String() != want || errb.String() != want {
				errs <- fmt.Errorf("command %d: code %d err %v: out ok %v err ok %v (%d/%d bytes)", i, code, err, out.String() == want, errb.String() == want, len(errb.String()), len(want))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.close()
	<-s.done
	t.Logf("session end: %v", s.err)
	time.Sleep(200 * time.Millisecond)
	if left, _ := filepath.Glob("/dev/shm/rdmabench-session.*"); len(left) > 0 {
		t.Errorf("closed session left %v", left)
	}
}
