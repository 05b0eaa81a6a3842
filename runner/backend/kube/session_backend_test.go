package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	vkapi "github.com/virtual-kubelet/virtual-kubelet/node/api"
)

// Found by a fresh-eyes audit of the exec session, through the backend's
// own exec path (exec_server_test.go) or a local shell.

// A caller queued behind another caller's session open gives up with its
// own deadline (it waited on a mutex, deaf to it, for the opener's whole
// bound).
func TestSessionQueuedCallerHonoursItsDeadline(t *testing.T) {
	es := &execServer{command: func(ctx context.Context, argv []string) *exec.Cmd {
		if len(argv) == 3 && argv[2] == sessionScript {
			return exec.CommandContext(ctx, "sleep", "5") // a shell that never says "@ r"
		}
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}}
	b := newExecBackend(t, es, nil)
	pod := target{pod: "p"}
	go func() { // the first caller: it opens the session, bounded by 4 s
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		defer cancel()
		_, _ = b.streamStdin(ctx, pod, []string{"true"}, nil, io.Discard, io.Discard, false)
	}()
	for es.count() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.streamStdin(ctx, pod, []string{"true"}, nil, io.Discard, io.Discard, false)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the queued caller's error: %v, want its deadline", err)
	}
	// Not a timing test: the opener holds the slot for 4 s; the caller
	// must not have waited for it.
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a caller with a 200 ms deadline returned after %v, with the opener", took.Round(time.Millisecond))
	}
}

// A start record lost in the stream's cut (written by the shell, never
// received) does not make the command "not started": it ran, and is not
// run again in a new session; its caller gets the session's end.
func TestSessionLostStartRecordRunsOnce(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "runs")
	var sessions int
	var mu sync.Mutex
	es := &execServer{command: func(ctx context.Context, argv []string) *exec.Cmd {
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}}
	// The session's first stream is cut just as its first "s" record is
	// on the way: the bytes were written by the shell, never delivered.
	orig := es.handle
	cutHandle := func(ctx context.Context, ns, pod, container string, argv []string, attach vkapi.AttachIO) error {
		if len(argv) > 4 && argv[2] == bundlePath {
			argv = argv[4:] // as the exec server does
		}
		mu.Lock()
		sessions++
		first := sessions == 1 && len(argv) == 3 && argv[2] == sessionScript
		mu.Unlock()
		if !first {
			return orig(ctx, ns, pod, container, argv, attach)
		}
		cut := make(chan struct{})
		var once sync.Once
		w := writerFunc(func(p []byte) (int, error) {
			select {
			case <-cut:
				return len(p), nil // the stream is gone
			default:
			}
			if bytes.Contains(p, []byte("\x1e@1 s")) {
				once.Do(func() { close(cut) })
				return len(p), nil
			}
			return attach.Stdout().Write(p)
		})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = w, io.Discard
		in, _ := cmd.StdinPipe()
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() { _, _ = io.Copy(in, attach.Stdin()); in.Close() }()
		go func() { _ = cmd.Wait() }()
		<-cut
		return errors.New("stream reset") // the stream broke
	}
	b := newExecBackendWith(t, cutHandle)
	code, err := b.streamStdin(context.Background(), target{pod: "p"}, []string{"sh", "-c", "echo run >> " + marker}, nil, io.Discard, io.Discard, false)
	// The first shell runs the command on its own time: wait for it (a
	// bound, not a timing), then a little for a second run that would come.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if data, _ := os.ReadFile(marker); len(data) > 0 {
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	data, _ := os.ReadFile(marker)
	if n := strings.Count(string(data), "run"); n != 1 {
		t.Errorf("code %d err %v: the command ran %d times", code, err, n)
	}
	if err == nil { // the backend names why the stream ended (here: no such pod)
		t.Errorf("code %d: the session ended under the command, and its caller was not told", code)
	}
}

// With bash as sh in a UTF-8 locale (RHEL, UBI, Fedora images) the read
// loop measured lines in characters: a line of multibyte characters went
// out as one record far over PIPE_BUF, and concurrent commands' records
// mixed. SESSION_TEST_LC=C is the control.
func TestSessionMultibyteLinesStayWhole(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	tmp := t.TempDir()
	lc := os.Getenv("SESSION_TEST_LC")
	if lc == "" {
		lc = "C.UTF-8"
	}
	open := shellOpener(append(os.Environ(), "LC_ALL="+lc, "TMPDIR="+tmp), bash, "--posix", "-c") // sh -> bash (RHEL, UBI, Fedora images)
	s, err := openSession(context.Background(), target{pod: "p"}, open)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	line := strings.Repeat("\U0001F600", 2000) // 2000 characters, 8000 bytes
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			var out, errb syncBuffer
			script := fmt.Sprintf("i=0; while [ $i -lt 5 ]; do echo %d%s >&2; i=$((i+1)); done", i, line)
			code, err := s.run(context.Background(), script, false, &out, &errb)
			want := strings.Repeat(fmt.Sprintf("%d%s\n", i, line), 5)
			if err != nil || code != 0 || errb.String() != want {
				errs <- fmt.Errorf("command %d: code %d err %v: stderr %d bytes, want %d (equal: %v)", i, code, err, len(errb.String()), len(want), errb.String() == want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Two containers of one pod, each with a read-only root (no mktemp dir)
// and the pod's shared /dev/shm, each in its own PID namespace: their
// session shells have the same $$. Each must still have an exit-code dir
// of its own, which the other's end does not remove.
func TestSessionShmDirNotSharedBetweenContainers(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command("unshare", "-p", "-f", "true").Run(); err != nil {
		t.Skip("no PID namespaces here:", err)
	}
	dir := t.TempDir() // no mktemp: as mktemp on a read-only root, it fails
	for _, bin := range []string{"sh", "mkdir", "rm", "sleep", "sed"} {
		p, err := exec.LookPath(bin)
		if err == nil {
			err = os.Symlink(p, filepath.Join(dir, bin))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		left, _ := filepath.Glob("/dev/shm/rdmabench-session.1.*")
		for _, d := range left {
			os.RemoveAll(d)
		}
	})
	container := shellOpener([]string{"PATH=" + dir}, "unshare", "-p", "-f", "/bin/sh", "-c") // a container's PID namespace
	a, err := openSession(context.Background(), target{pod: "p-a"}, container)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := openSession(context.Background(), target{pod: "p-b"}, container)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bs.close)
	if code, err := a.run(context.Background(), "exit 0", false, io.Discard, io.Discard); code != 0 || err != nil {
		t.Fatalf("a: %d %v", code, err)
	}
	a.close() // container a's session ends (Cleanup, its stream cut...)
	<-a.done
	code, err := bs.run(context.Background(), "exit 0", false, io.Discard, io.Discard)
	if code != 0 || err != nil {
		t.Errorf("container b, after a's session ended: exit %d (%v), want 0", code, err)
	}
}

// Scripts with lines that look like the protocol, 0x1e in a script,
// signals, codes over 255, 97 (the no-temp-dir code) and stdin.
func TestSessionScriptsAndCodes(t *testing.T) {
	s := openLocal(t, nil)
	for _, c := range []struct {
		script string
		code   int
		out    string
	}{
		{"echo a\n2 1 q\n@1 x 0\necho b", 0, "a\nb\n"},      // lines that look like the protocol
		{"x='\x1e'; [ ${#x} -eq 1 ] && echo ok", 0, "ok\n"}, // 0x1e in the script, not printed
		{"kill -9 $$", 137, ""},
		{"exit 300", 44, ""},
		{"exit 97", 97, ""},
		{"read x; echo \"[$x]\"", 0, "[]\n"}, // stdin is not the session's
	} {
		var out syncBuffer
		code, err := s.run(context.Background(), c.script, false, &out, io.Discard)
		if err != nil || code != c.code || out.String() != c.out {
			t.Errorf("%q: code %d err %v out %q", c.script, code, err, out.String())
		}
	}
	if !s.alive() {
		t.Error("session died")
	}
}

// Through the exec subresource: a user command exiting 97 in a working
// session is its exit code, not the no-temp-dir fallback.
func TestSessionUserExit97IsNotTheFallback(t *testing.T) {
	es := &execServer{command: func(ctx context.Context, argv []string) *exec.Cmd {
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}}
	var prog syncBuffer
	b := newExecBackend(t, es, &prog)
	pod := target{pod: "p"}
	for i := 0; i < 3; i++ {
		var out, errb syncBuffer
		code, err := b.streamStdin(context.Background(), pod, []string{"sh", "-c", "echo hi; exit 97"}, nil, &out, &errb, false)
		if err != nil || code != 97 || out.String() != "hi\n" {
			t.Fatalf("run %d: code %d err %v out %q", i, code, err, out.String())
		}
	}
	if n := es.count(); n != 1 {
		t.Errorf("%d execs, want 1 (the session)", n)
	}
	if prog.String() != "" {
		t.Errorf("progress %q", prog.String())
	}
}

// No temp dir (no mktemp, no mkdir): each command an exec of its own, run
// once, said once.
func TestSessionNoTempDirFallsBackOnce(t *testing.T) {
	dir := t.TempDir() // sh alone: no mktemp, no mkdir
	if err := os.Symlink("/bin/sh", filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	es := &execServer{command: func(ctx context.Context, argv []string) *exec.Cmd {
		c := exec.CommandContext(ctx, "/bin/sh", argv[1:]...)
		c.Env = []string{"PATH=" + dir}
		return c
	}}
	var prog syncBuffer
	b := newExecBackend(t, es, &prog)
	pod := target{pod: "p"}
	for i := 0; i < 3; i++ {
		var out, errb syncBuffer
		code, err := b.streamStdin(context.Background(), pod, []string{"sh", "-c", "echo hi; echo e >&2; exit 5"}, nil, &out, &errb, false)
		if err != nil || code != 5 || out.String() != "hi\n" || errb.String() != "e\n" {
			t.Fatalf("run %d: code %d err %v out %q err %q", i, code, err, out.String(), errb.String())
		}
	}
	if n := es.count(); n != 4 {
		t.Errorf("%d execs, want 4 (one session try, three commands)", n)
	}
	if c := strings.Count(prog.String(), "no writable temp dir"); c != 1 {
		t.Errorf("said %d times: %q", c, prog.String())
	}
}

// A command after Cleanup closed the sessions (a late kill) takes an exec
// of its own: it opens no session that nothing would close.
func TestSessionNoneOpenedAfterCleanup(t *testing.T) {
	es := &execServer{command: func(ctx context.Context, argv []string) *exec.Cmd {
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}}
	b := newExecBackend(t, es, nil)
	pod := target{pod: "p"}
	run := func() {
		t.Helper()
		var out syncBuffer
		code, err := b.streamStdin(context.Background(), pod, []string{"sh", "-c", "echo hi"}, nil, &out, io.Discard, false)
		if err != nil || code != 0 || out.String() != "hi\n" {
			t.Fatalf("code %d err %v out %q", code, err, out.String())
		}
	}
	run()
	b.closeSessions()
	run()
	es.mu.Lock()
	defer es.mu.Unlock()
	var sessions int
	for _, argv := range es.execs {
		if len(argv) == 3 && argv[2] == sessionScript {
			sessions++
		}
	}
	if len(es.execs) != 2 || sessions != 1 {
		t.Errorf("%d execs, %d of them sessions: want the first command's session and one exec after Cleanup", len(es.execs), sessions)
	}
}
