package ssh

import (
	"bytes"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// pgidMarker starts the line the wrapper prints on stderr with the process
// group of the command; the backend removes that line from the output.
const pgidMarker = "@@rdmabench-pgid "

// wrapCommand is the remote shell line for argv. The command is started in
// the background (so it is not a process-group leader) through setsid,
// which then makes it the leader of a new session and process group whose
// id is its pid ($!): Kill signals that group. The shell waits for it and
// exits with its status (128+N when it died of signal N).
func wrapCommand(argv []string, env map[string]string) string {
	var b strings.Builder
	b.WriteString("setsid env")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(" " + quote(k+"="+env[k]))
	}
	b.WriteString(" " + shellJoin(argv))
	b.WriteString(" & p=$!; echo \"" + pgidMarker + "$p\" >&2; wait $p")
	return b.String()
}

var safe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// quote makes s one word for a POSIX shell.
func quote(s string) string {
	if s != "" && safe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}

// pgidFilter passes stderr through line by line, taking out the wrapper's
// pgid line (wherever it lands among the command's own lines).
type pgidFilter struct {
	out   io.Writer
	found func(int)

	mu   sync.Mutex
	buf  []byte
	seen bool
}

func (f *pgidFilter) Write(p []byte) (int, error) {
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
			if _, err := f.out.Write(line); err != nil {
				return len(p), err
			}
		}
		f.buf = f.buf[i+1:]
	}
	if f.seen && len(f.buf) > 0 && !bytes.HasPrefix([]byte(pgidMarker), f.buf) {
		// Once the marker is seen, partial lines need no holding back.
		f.out.Write(f.buf)
		f.buf = f.buf[:0]
	}
	return len(p), nil
}

func (f *pgidFilter) take(line []byte) bool {
	if f.seen {
		return false
	}
	rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte(pgidMarker))
	if !ok {
		return false
	}
	n, err := strconv.Atoi(string(rest))
	if err != nil {
		return false
	}
	f.seen = true
	f.found(n)
	return true
}

// flush writes what is left when the stream ends.
func (f *pgidFilter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.buf) > 0 && !f.take(f.buf) {
		f.out.Write(f.buf)
	}
	f.buf = nil
}

// giveUp releases waiters when the command ended without a pgid line.
func (f *pgidFilter) giveUp(known chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.seen {
		f.seen = true
		close(known)
	}
}
