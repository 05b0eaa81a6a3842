package agent

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// remotePod is a pod of a node reached through shell (sh -c: this host).
func remotePod(shell []string, uid string) *pod {
	a := &Agent{opts: Options{Name: "machine-1", Remote: &Remote{Shell: shell, HostIP: "127.0.0.2"}}}
	return &pod{agent: a, spec: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: types.UID(uid)}}}
}

// The line the shell runs gives argv its arguments, env and working folder
// byte for byte (quotes, $, backquotes, newlines), the marker, and nothing
// of the shell's own environment; exit codes and stdin come through.
func TestRemoteArgv(t *testing.T) {
	t.Setenv("KUBECLUSTER_TEST_LEAK", "leaked")
	p := remotePod([]string{"sh", "-c"}, "uid-1")
	dir := t.TempDir() + "/it's a \"dir\" $x"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	odd := "it's \"q\" $HOME `id` \\ ; \nline2 $(id)"
	env := []string{"PATH=" + os.Getenv("PATH"), "ODD=" + odd}
	args := p.remoteArgv(env, dir, []string{"sh", "-c", `printf '%s|' "$ODD" "$PWD" "$1" "$` + PodMarker + `" "$KUBECLUSTER_TEST_LEAK"; read l; echo "$l"; exit 7`, "sh", odd})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = strings.NewReader("from stdin\n")
	out, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("exit code %d (%v); want 7", code, err)
	}
	if want := odd + "|" + dir + "|" + odd + "|uid-1||from stdin\n"; string(out) != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

// The kill script prints the count of survivors and nothing else, though
// processes come and go (or cannot be read) during its scans: a shell's
// complaint about a vanished /proc/PID/environ must not bury the count.
func TestRemoteKillScript(t *testing.T) {
	uid := "kill-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	victim := exec.Command("sleep", "300")
	victim.Env = append(os.Environ(), PodMarker+"="+uid)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = victim.Wait(); close(waited) }()
	t.Cleanup(func() { _ = victim.Process.Kill(); <-waited })

	cmd := exec.Command("sh", "-c", remoteKillScript(uid, time.Second))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || string(out) != "0\n" || stderr.Len() > 0 {
		t.Errorf("err %v stdout %q stderr %q; want only the count 0", err, out, stderr.String())
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the marked process still runs")
	}
}

// Survivors are reported even when the shell (ssh) writes warnings of its
// own: the count is read from stdout.
func TestRemoteKillSurvivors(t *testing.T) {
	ssh := []string{"sh", "-c", `echo "Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts." >&2; echo 1`}
	err := remotePod(ssh, "uid-2").killRemote(0)
	if err == nil || !strings.Contains(err.Error(), "1 process(es) survived SIGKILL on machine-1") {
		t.Fatalf("err %v; want the survivor reported", err)
	}
	// No count at all is an error too, never a success.
	err = remotePod([]string{"sh", "-c", "echo hello"}, "uid-3").killRemote(0)
	if err == nil || !strings.Contains(err.Error(), "no count of the survivors") {
		t.Fatalf("err %v; want the missing count reported", err)
	}
}
