package kube

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSessionAuditCutScriptDoesNotRun(t *testing.T) {
	dir := t.TempDir()
	script := "touch " + filepath.Join(dir, "first") + "\ntouch " + filepath.Join(dir, "second")
	cutAt := len("1 2 q\n") + strings.Index(script, "\n") + 1 // its header and first line
	cut := func(ctx context.Context, sh string, stdin io.Reader, stdout, stderr io.Writer) error {
		return localShell(nil)(ctx, sh, io.LimitReader(stdin, int64(cutAt)), stdout, stderr)
	}
	s, err := openSession(context.Background(), target{pod: "p"}, cut)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	_, _ = s.run(context.Background(), script, false, io.Discard, io.Discard)
	<-s.done
	if _, err := os.Stat(filepath.Join(dir, "first")); err == nil {
		t.Error("the first line of a cut script ran")
	}
}

// Each command's exit code goes through a file in the session's temp
// dir: the files must not pile up, one per command, for the session's
// life (thousands of rounds in a long run).
func TestSessionAuditExitFilesDoNotPileUp(t *testing.T) {
	dir := t.TempDir()
	s, err := openSession(context.Background(), target{pod: "p"}, localShell(append(os.Environ(), "TMPDIR="+dir)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	for range 50 {
		if _, err := s.run(context.Background(), "true", false, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*", "*")); len(files) > 1 {
		t.Errorf("%d files in the session's temp dir after 50 commands run one at a time", len(files))
	}
}

// A caller that gave up (its run returned) is not written to after.
func TestSessionAuditNoWriteAfterReturn(t *testing.T) {
	s := openLocal(t, nil)
	entered, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	late := make(chan bool, 1)
	w := writerFunc(func(p []byte) (int, error) {
		select {
		case entered <- struct{}{}: // the first write waits until run has had its chance to return
			<-release
			select {
			case <-returned:
				late <- true
			default:
				late <- false
			}
		default:
		}
		return len(p), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	go func() { time.Sleep(time.Second); close(release) }()
	_, err := s.run(ctx, "echo one; sleep 5", false, w, io.Discard)
	close(returned)
	if err == nil {
		t.Fatal("run did not give up")
	}
	if <-late {
		t.Error("the session wrote to a caller's stdout after its run had returned")
	}
}
