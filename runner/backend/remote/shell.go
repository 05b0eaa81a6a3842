// Package remote holds what the backends whose endpoints are reached
// through a command channel (an ssh session, a pod's exec stream) share:
// the shell line that starts a command in a process group of its own and
// reports that group, the script that kills it, and NIC discovery read
// through the channel.
package remote

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PGIDMarker starts the line the wrapper prints on stderr with the process
// group of the command; the backend removes that line from the output.
const PGIDMarker = "@@rdmabench-pgid "

// Wrap is the remote shell line for argv. The command is started in
// the background (so it is not a process-group leader) through setsid,
// which then makes it the leader of a new session and process group whose
// id is its pid ($!): Kill signals that group. The shell waits for it and
// exits with its status (128+N when it died of signal N).
func Wrap(argv []string, env map[string]string) string {
	var b strings.Builder
	b.WriteString("setsid env")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(" " + Quote(k+"="+env[k]))
	}
	b.WriteString(" " + Join(argv))
	b.WriteString(" & p=$!; echo \"" + PGIDMarker + "$p\" >&2; wait $p")
	return b.String()
}

var safe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// Quote makes s one word for a POSIX shell.
func Quote(s string) string {
	if s != "" && safe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Brief is argv as an error names it: the quoted line when short, else its
// first 80 characters and its length (a preflight script is 40 lines,
// which would bury the error after it).
func Brief(argv []string) string {
	s := Join(argv)
	if len(s) <= 120 {
		return s
	}
	first, _, _ := strings.Cut(s, "\n")
	return fmt.Sprintf("%.80s… (%d bytes)", first, len(s))
}

// Join quotes argv into one shell line.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// PGIDFilter passes stderr through line by line, taking out the wrapper's
// pgid line (wherever it lands among the command's own lines).
type PGIDFilter struct {
	Out   io.Writer // where the command's own stderr goes
	Found func(int) // called once with the process group id

	mu   sync.Mutex
	buf  []byte
	seen bool
}

// Write implements io.Writer.
func (f *PGIDFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			break
		}
		line := f.buf[:i+1]
		if !f.take(line) {
			if _, err := f.Out.Write(line); err != nil {
				return len(p), err
			}
		}
		f.buf = f.buf[i+1:]
	}
	if f.seen && len(f.buf) > 0 && !bytes.HasPrefix([]byte(PGIDMarker), f.buf) {
		// Once the marker is seen, partial lines need no holding back.
		if _, err := f.Out.Write(f.buf); err != nil {
			return len(p), err
		}
		f.buf = f.buf[:0]
	}
	return len(p), nil
}

func (f *PGIDFilter) take(line []byte) bool {
	if f.seen {
		return false
	}
	rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte(PGIDMarker))
	if !ok {
		return false
	}
	n, err := strconv.Atoi(string(rest))
	if err != nil {
		return false
	}
	f.seen = true
	f.Found(n)
	return true
}

// Flush writes what is left when the stream ends.
func (f *PGIDFilter) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.buf) > 0 && !f.take(f.buf) {
		_, _ = f.Out.Write(f.buf) // the stream has ended: nowhere to report a failed write
	}
	f.buf = nil
}

// GiveUp releases waiters when the command ended without a pgid line.
// notFound runs at most once, and never after Found.
func (f *PGIDFilter) GiveUp(notFound func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.seen {
		f.seen = true
		notFound()
	}
}

// KillScript ends process group pgid: SIGTERM, then SIGKILL once grace
// has passed with the group still alive. It always exits 0.
func KillScript(pgid int, grace time.Duration) string {
	g := strconv.Itoa(pgid)
	steps := strconv.Itoa(int(grace / (100 * time.Millisecond)))
	return "kill -TERM -" + g + " 2>/dev/null; i=0; while kill -0 -" + g + " 2>/dev/null && [ $i -lt " + steps +
		" ]; do sleep 0.1; i=$((i+1)); done; kill -KILL -" + g + " 2>/dev/null; true"
}

// OrDiscard is w, or io.Discard when w is nil.
func OrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// MergeEnv is a with b's variables over it (neither is changed).
func MergeEnv(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
