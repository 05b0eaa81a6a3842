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
)

// localShell opens sessions in a local sh, as the exec subresource does
// in a pod; env, when set, is the shell's whole environment.
func localShell(env []string) sessionOpener { return shellOpener(env, "/bin/sh", "-c") }

// shellOpener opens sessions in the local shell argv (the script is its
// last argument), with env as its environment (nil: this process's).
func shellOpener(env []string, argv ...string) sessionOpener {
	return func(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) error {
		cmd := exec.CommandContext(ctx, argv[0], append(argv[1:len(argv):len(argv)], script)...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.Env = env
		cmd.WaitDelay = time.Second
		// Fed as the exec stream feeds it: not waited for.
		in, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() {
			_, _ = io.Copy(in, stdin)
			in.Close()
		}()
		return cmd.Wait()
	}
}

func openLocal(t *testing.T, env []string) *session {
	t.Helper()
	// Its temp dir under the test's: a shell killed (the stream cut)
	// leaves its own behind.
	if env == nil {
		env = os.Environ()
	}
	tmp, err := os.MkdirTemp("", "session")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	env = append(env, "TMPDIR="+tmp)
	s, err := openSession(context.Background(), target{pod: "p"}, localShell(env))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// syncBuffer is a bytes.Buffer safe for the session's writer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSessionRunsCommandsConcurrentlyWithTheirOwnOutputAndCode(t *testing.T) {
	long := strings.Repeat("l", 5000) // split in pieces that must not mix
	for _, name := range []string{"sed", "read loop"} {
		t.Run(name, func(t *testing.T) {
			var env []string
			if name == "read loop" { // an image without GNU sed (busybox's has no -u)
				dir := t.TempDir()
				for _, bin := range []string{"sh", "mkdir", "mktemp", "rm", "sleep"} {
					path, err := exec.LookPath(bin)
					if err == nil {
						err = os.Symlink(path, filepath.Join(dir, bin))
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				env = []string{"PATH=" + dir}
			}
			s := openLocal(t, env)
			const n = 24
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					var out, errb syncBuffer
					script := fmt.Sprintf("i=0; while [ $i -lt 50 ]; do echo out-%d-$i; echo err-%d-$i >&2; i=$((i+1)); done; echo %d%s; printf 'tail-%d'; exit %d", i, i, i, long, i, i%7)
					tool := i%2 == 0 // stdout through sed, or the shell loop
					code, err := s.run(context.Background(), script, tool, &out, &errb)
					var wantOut, wantErr strings.Builder
					for j := range 50 {
						fmt.Fprintf(&wantOut, "out-%d-%d\n", i, j)
						fmt.Fprintf(&wantErr, "err-%d-%d\n", i, j)
					}
					fmt.Fprintf(&wantOut, "%d%s\ntail-%d", i, long, i)
					switch {
					case err != nil:
						errs <- fmt.Errorf("command %d: %v", i, err)
					case code != i%7:
						errs <- fmt.Errorf("command %d: exit %d, want %d", i, code, i%7)
					case out.String() != wantOut.String():
						errs <- fmt.Errorf("command %d: stdout %q", i, out.String())
					case errb.String() != wantErr.String():
						errs <- fmt.Errorf("command %d: stderr %q", i, errb.String())
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestSessionKeepsScriptsAndLinesWhole(t *testing.T) {
	s := openLocal(t, nil)
	long := strings.Repeat("0123456789", 1000) // 10,000 bytes: five pieces
	// Each script gives what `sh -c script` gives, byte for byte.
	for _, script := range []string{
		"printf '%s\\n' 'a\\b' '100%' \"it's\"\necho 'two\nlines'",
		`printf '\c'; echo '\c\n\0101'; printf '%b' 'x\ty'`,
		"echo " + long,
		"printf 'no newline'",
		"echo; printf 'ends without newline'; sleep 0.1",
		"cat; echo read-nothing", // stdin is /dev/null, not the session's
		"  echo '  spaced  '; echo $0",
		"true",
	} {
		want, err := exec.Command("sh", "-c", script).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range []bool{false, true} {
			var out, errb syncBuffer
			code, err := s.run(context.Background(), script, tool, &out, &errb)
			if err != nil || code != 0 || out.String() != string(want) {
				t.Errorf("%q (tool %v): code %d err %v\nstdout %q\nwant   %q\nstderr %q", script, tool, code, err, out.String(), want, errb.String())
			}
		}
	}
}

func TestSessionEndingFailsCommandsInFlightAndLater(t *testing.T) {
	s := openLocal(t, nil)
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := s.run(context.Background(), "echo started; sleep 30", true, &out, io.Discard)
		done <- err
	}()
	// Its first line comes while it runs (awk must not hold it back).
	deadline := time.Now().Add(5 * time.Second)
	for out.String() == "" {
		if time.Now().After(deadline) {
			t.Fatal("a running command's first line did not come within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.cancel() // the stream breaks (a pod deleted, an apiserver restarting)
	var gone *errSessionGone
	select {
	case err := <-done:
		if !errors.As(err, &gone) || gone.notStarted {
			t.Fatalf("in flight: %v (%#v), want a session gone after the start", err, gone)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a command in flight outlived its session")
	}
	if _, err := s.run(context.Background(), "echo late", false, io.Discard, io.Discard); !errors.As(err, &gone) || !gone.notStarted {
		t.Fatalf("after the end: %v, want a session gone before the start", err)
	}
	if s.alive() {
		t.Fatal("the session says it is alive")
	}
}

func TestSessionGivesUpWithItsCaller(t *testing.T) {
	s := openLocal(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.run(ctx, "sleep 5", false, io.Discard, io.Discard); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the caller's deadline", err)
	}
	// The session itself is still of use.
	var out syncBuffer
	if code, err := s.run(context.Background(), "echo again", false, &out, io.Discard); err != nil || code != 0 || out.String() != "again\n" {
		t.Fatalf("after a caller gave up: %d %v %q", code, err, out.String())
	}
}

func TestSessionThatCannotStartSaysWhy(t *testing.T) {
	failing := func(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) error {
		fmt.Fprint(stderr, "container \"tools\" is not running")
		return errors.New("command terminated with exit code 126")
	}
	_, err := openSession(context.Background(), target{pod: "p"}, failing)
	if err == nil || !strings.Contains(err.Error(), "exit code 126") || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("got %v", err)
	}
}

func TestSessionWithoutATempDirSaysSo(t *testing.T) {
	dir := t.TempDir() // sh alone: no mktemp, no mkdir
	if err := os.Symlink("/bin/sh", filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	_, err := openSession(context.Background(), target{pod: "p"}, localShell([]string{"PATH=" + dir}))
	if err == nil || !strings.Contains(err.Error(), "97") {
		t.Fatalf("got %v, want the shell's exit 97", err)
	}
}
