package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend/remote"
)

// A session is one long-lived exec stream per pod container, opened at
// its first command, through which the backend runs every later command
// of that container: a command costs the API nothing (no request, no
// TLS handshake, no stream upgrade through the apiserver to the kubelet)
// and the node no container exec (runc's), only a fork in the pod. At
// 256 endpoints a round of pairs is 256 commands: one exec each would be
// 256 API requests and 256 runtime execs per round.
//
// The session is a POSIX shell loop (sessionScript). The backend writes
// a line per command, its id and the number of lines of its script, then
// the script. The shell runs each with sh -c in the background, its
// stdin /dev/null, and writes back records, each begun by recordStart:
// "@<id> s" when the command starts (for a person reading a trace; the
// backend does not count on it, as it may be lost with the stream), then
// one record per line of output, "@<id> o <line>" (stdout) or
// "@<id> e <line>" (stderr), a line longer than sessionChunk split into
// "@<id> o+<part>" pieces first, so that every write stays under the
// pipe's atomic size and the records of concurrent commands never mix;
// last "@<id> x <code>", once the command and its output are done.
// "@ r" says the session is ready, "@ k" is its heartbeat.
//
// What it does not carry: the byte 0x1e (ASCII RS, the record start) in a
// command's output begins a record there (output that forges
// "\x1e@<id> x 0" ends another command of the session early), and NUL
// bytes are lost where a shell loop prefixes the lines (stderr; stdout of
// short commands, and of tools where the image has no GNU sed). The
// tools' output is text; --kube-exec per-command carries any bytes.
type session struct {
	pod   target
	stdin *io.PipeWriter
	// wmu keeps each command's two lines together on stdin.
	wmu sync.Mutex

	mu   sync.Mutex
	cmds map[uint64]*sessionCmd
	// ready is closed at "@ r"; done when the stream has ended, with err.
	ready, done chan struct{}
	err         error
	cancel      context.CancelFunc
	// carry is the start of a line whose end has not come yet.
	carry []byte
}

// sessionCmd is one command in flight in a session.
type sessionCmd struct {
	stdout, stderr io.Writer
	exit           chan int // buffered: the "x" line's code
	// wmu is held while its output is written; gone: its caller gave
	// up, and is written to no more.
	wmu  sync.Mutex
	gone bool
}

// sessionChunk is the longest piece of a line the session writes at once
// (well under PIPE_BUF, 4096).
const sessionChunk = 2048

var chunk = strconv.Itoa(sessionChunk)

// sessionHeartbeat paces "@ k": an idle session still carries bytes, so
// that an idle-stream timeout (a kubelet's, a load balancer's) does not
// end it between rounds.
const sessionHeartbeat = 60 * time.Second

// sessionReadyBound bounds the wait for a new session's "@ r".
const sessionReadyBound = 60 * time.Second

// sessionScript is the session's shell.
var sessionScript = strings.Join([]string{
	`exec 3>&1`,
	// The exit codes go through files: a command substitution would cost
	// a fork per command, and forks are most of a command's cost here.
	// Without mktemp (a read-only root), /dev/shm: shared by the pod's
	// containers, whose shells may have the same pid in their own pid
	// namespaces, so a name another session holds is skipped (mkdir
	// without -p fails on it).
	`__rb_d=$(mktemp -d 2>/dev/null) || { [ -d /dev/shm ] && [ -w /dev/shm ] && __rb_k=0 && until __rb_d=/dev/shm/rdmabench-session.$$.$__rb_k && mkdir "$__rb_d" 2>/dev/null; do __rb_k=$((__rb_k+1)); [ $__rb_k -lt 64 ] || exit ` + strconv.Itoa(sessionNoTempDir) + `; done; } || exit ` + strconv.Itoa(sessionNoTempDir),
	`trap 'rm -rf "$__rb_d"' EXIT`,
	`( trap - EXIT; while sleep ` + strconv.Itoa(int(sessionHeartbeat.Seconds())) + ` </dev/null >/dev/null 2>&1 3>&-; do printf '\036@ k\n' || exit 0; done ) &`,
	`__rb_hb=$!`,
	// Without GNU sed (busybox), a read loop prefixes the lines.
	// LC_ALL=C: ${#l} counts bytes, as printf's precision does (bash in
	// a UTF-8 locale counts characters, and a line of multibyte ones
	// would go out in one write over PIPE_BUF). pre runs in a pipeline's
	// subshell: the command's own locale is untouched.
	`pre() { LC_ALL=C; while :; do n='\n'; IFS= read -r l || { [ -n "$l" ] || break; n=; }`,
	`  while [ ${#l} -gt ` + chunk + ` ]; do c=$(printf '%.` + chunk + `s' "$l"); printf '\036%s+%s\n' "$1" "$c"; l=${l#"$c"}; done`,
	`  printf "\036%s %s$n" "$1" "$l"; [ -n "$n" ] || break; done; }`,
	`__rb_sed=; sed -u q </dev/null >/dev/null 2>&1 && __rb_sed=1`,
	`printf '\036@ r\n'`,
	`while read -r __rb_i __rb_n __rb_m; do`,
	// A script cut short (the stream ended in it) is not run: the loop ends.
	`  __rb_s=; while [ "$__rb_n" -gt 0 ]; do IFS= read -r __rb_l || break 2; __rb_s="$__rb_s$__rb_l` + "\n" + `"; __rb_n=$((__rb_n-1)); done`,
	`  ( trap - EXIT; printf '\036@%s s\n' "$__rb_i" || exit`,
	`    if [ -n "$__rb_sed" ] && [ "$__rb_m" = t ]; then`,
	`      { { sh -c "$__rb_s" 2>&1 1>&4 3>&- 4>&-; echo $? >"$__rb_d/$__rb_i"; } | pre "@$__rb_i e" >&3; } 4>&1 | ` + sedPrefix(`@$__rb_i o`),
	`    else`,
	`      { { sh -c "$__rb_s" 2>&1 1>&4 3>&- 4>&-; echo $? >"$__rb_d/$__rb_i"; } | pre "@$__rb_i e" >&3; } 4>&1 | pre "@$__rb_i o"`,
	`    fi`,
	`    __rb_r=255; read -r __rb_r <"$__rb_d/$__rb_i"; printf '\036@%s x %s\n' "$__rb_i" "$__rb_r" ) </dev/null &`,
	`done`,
	`kill $__rb_hb 2>/dev/null`,
	`wait`,
}, "\n")

// sedPrefix is GNU sed reading a line as it comes and writing each in
// one write, prefixed with the record start and prefix (awk would not:
// mawk holds its input back until 4 KiB have come or, told -W
// interactive, writes a line in pieces that other commands' lines then
// split). A long line is cut after its sessionChunk-th byte by
// s/./&\n/N, cheap to compile where a .\{N\} would cost each sed 100 ms.
func sedPrefix(prefix string) string {
	return `LC_ALL=C sed -u -e 't r' -e ':r' -e 's/./&\n/` + chunk + `' -e 't m' -e "s/^/\\o036` + prefix + ` /" -e b -e ':m' -e "s/^/\\o036` + prefix + `+/" -e P -e D`
}

// errSessionGone is a command's session ending under it. NotStarted: the
// shell cannot have begun it (the session had ended before its script
// was written, or the write failed: the shell runs no script cut short),
// so running it again in a new session cannot run it twice. Once its
// script is written, its start record may be lost with the stream while
// the command runs in the pod: then it is not notStarted.
type errSessionGone struct {
	err        error
	notStarted bool
}

func (e *errSessionGone) Error() string {
	if e.notStarted {
		return "exec session ended before the command started: " + e.err.Error()
	}
	return "exec session ended: " + e.err.Error()
}

func (e *errSessionGone) Unwrap() error { return e.err }

// sessionOpener starts the session's shell with stdin, stdout and stderr
// wired, and returns when its stream has ended (the exec subresource; a
// local shell in tests).
type sessionOpener func(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) error

// openSession starts a session through open and waits for it to be ready.
func openSession(ctx context.Context, pod target, open sessionOpener) (*session, error) {
	sctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &session{pod: pod, stdin: pw, cmds: map[uint64]*sessionCmd{}, ready: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
	var stderr bytes.Buffer
	go func() { // a stream cut short must not leave its stdin's reader waiting
		<-sctx.Done()
		_ = pr.CloseWithError(context.Canceled)
	}()
	go func() {
		err := open(sctx, sessionScript, pr, writerFunc(s.feed), &limitedBuffer{buf: &stderr, max: 4096})
		if err == nil {
			err = errors.New("the session's shell exited")
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		_ = pr.CloseWithError(err)
		s.end(err)
	}()
	t := time.NewTimer(sessionReadyBound)
	defer t.Stop()
	select {
	case <-s.ready:
		return s, nil
	case <-s.done:
		return nil, s.err
	case <-t.C:
		s.cancel()
		return nil, fmt.Errorf("exec session in pod %s: not ready within %s", pod, sessionReadyBound)
	case <-ctx.Done():
		s.cancel()
		return nil, context.Cause(ctx)
	}
}

// run runs script in the session, streaming its output to stdout and
// stderr, and returns its exit code. An error is the session ending
// (errSessionGone) or ctx; the command may then still run in the pod.
//
// tool: its stdout may be long, so GNU sed prefixes it where the image
// has it (an exec, cheaper per line); else a shell loop does (no exec,
// cheaper for the few lines of a short command). Stderr, always short
// here (errors, the process-group line), takes the loop.
func (s *session) run(ctx context.Context, script string, tool bool, stdout, stderr io.Writer) (int, error) {
	if ctx.Err() != nil { // a caller that has given up runs nothing
		return -1, context.Cause(ctx)
	}
	c := &sessionCmd{stdout: stdout, stderr: stderr, exit: make(chan int, 1)}
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return -1, &errSessionGone{err: err, notStarted: true}
	}
	// The lowest id not in flight (a command is until its "x" line, even
	// one whose caller gave up): the shell's exit-code files, named by
	// id, are then as many as the commands in flight at once.
	id := uint64(1)
	for s.cmds[id] != nil {
		id++
	}
	s.cmds[id] = c
	s.mu.Unlock()
	s.wmu.Lock()
	// Its id and line count, then its lines: the shell reads them with
	// builtins alone.
	lines := strings.Count(script, "\n") + 1
	mode := "q"
	if tool {
		mode = "t"
	}
	_, werr := io.WriteString(s.stdin, strconv.FormatUint(id, 10)+" "+strconv.Itoa(lines)+" "+mode+"\n"+script+"\n")
	s.wmu.Unlock()
	if werr != nil {
		s.mu.Lock()
		delete(s.cmds, id)
		s.mu.Unlock()
		return -1, &errSessionGone{err: werr, notStarted: true}
	}
	select {
	case code := <-c.exit:
		return code, nil
	case <-s.done:
		select { // its exit may be the session's last line
		case code := <-c.exit:
			return code, nil
		default:
		}
		// Written, so perhaps begun, its start record lost with the
		// stream: not to be run again.
		return -1, &errSessionGone{err: s.err}
	case <-ctx.Done():
		c.wmu.Lock() // a write under way ends before run returns
		c.gone = true
		c.wmu.Unlock()
		return -1, context.Cause(ctx)
	}
}

// alive says whether the session's stream still runs.
func (s *session) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// close ends the session: its shell sees the end of its stdin and exits
// once its commands have; a stream still open after sessionCloseBound is
// cut. It does not wait.
func (s *session) close() {
	_ = s.stdin.Close()
	go func() {
		t := time.NewTimer(sessionCloseBound)
		defer t.Stop()
		select {
		case <-s.done:
		case <-t.C:
			s.cancel()
		}
	}()
}

// sessionCloseBound is how long a closed session's shell may take to end.
const sessionCloseBound = 5 * time.Second

// end records why the stream ended; commands in flight get it.
func (s *session) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	close(s.done)
	s.cancel()
}

// recordStart begins every record the session writes. A record ends
// with its newline, or, when a command's output ended without one, where
// the next record begins: such a last line reaches the pipe without its
// newline (sed keeps it so), and the next writer's record follows it at
// once.
const recordStart = '\x1e'

// feed takes the session's stdout as it comes, record by record.
func (s *session) feed(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\n\x1e")
		if i < 0 {
			s.carry = append(s.carry, p...)
			break
		}
		switch p[i] {
		case '\n':
			s.carry = append(s.carry, p[:i]...)
			s.record(s.carry, true)
		case recordStart:
			s.carry = append(s.carry, p[:i]...)
			s.record(s.carry, false) // the one before, if any, had no newline
		}
		s.carry = s.carry[:0]
		p = p[i+1:]
	}
	return n, nil
}

// record handles one record ("@<id> <kind>…", its start marker gone);
// newline: it ended with one. Anything else is dropped.
func (s *session) record(l []byte, newline bool) {
	if len(l) < 2 || l[0] != '@' {
		return
	}
	if l[1] == ' ' { // the session's own: ready, heartbeat
		if string(l[2:]) == "r" {
			select {
			case <-s.ready:
			default:
				close(s.ready)
			}
		}
		return
	}
	sp := bytes.IndexByte(l, ' ')
	if sp < 0 || sp+2 > len(l) {
		return
	}
	id, err := strconv.ParseUint(string(l[1:sp]), 10, 64)
	if err != nil {
		return
	}
	s.mu.Lock()
	c := s.cmds[id]
	kind := l[sp+1]
	if c != nil && kind == 'x' {
		delete(s.cmds, id)
	}
	s.mu.Unlock()
	if c == nil {
		return
	}
	rest := l[sp+2:]
	switch kind {
	case 'x':
		code, err := strconv.Atoi(strings.TrimSpace(string(rest)))
		if err != nil {
			code = 255
		}
		c.exit <- code
	case 'o', 'e':
		w := c.stdout
		if kind == 'e' {
			w = c.stderr
		}
		if len(rest) == 0 || w == nil {
			return
		}
		text := rest[1:]
		if rest[0] == ' ' && newline { // '+': a piece of a long line, its newline the session's
			text = append(append([]byte(nil), text...), '\n')
		}
		c.wmu.Lock()
		if !c.gone {
			_, _ = w.Write(text)
		}
		c.wmu.Unlock()
	}
}

// writerFunc is a function as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// sessionSlot holds a pod container's session. Its lock (a channel, so
// that a caller waits with its own deadline) makes the callers that find
// none wait for the one that opens it, up to sessionReadyBound.
type sessionSlot struct {
	lock chan struct{}
	s    *session
	// none: the container cannot hold a session (errNoSessionHere).
	none bool
}

func newSessionSlot() *sessionSlot { return &sessionSlot{lock: make(chan struct{}, 1)} }

// acquire takes the slot's lock, or gives up with ctx.
func (slot *sessionSlot) acquire(ctx context.Context) error {
	select {
	case slot.lock <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if ctx.Err() != nil { // both were ready: select may pick the lock
		<-slot.lock
		return context.Cause(ctx)
	}
	return nil
}

func (slot *sessionSlot) release() { <-slot.lock }

// sessionNoTempDir is the session shell's exit code when it finds no
// writable temp dir for its commands' exit codes.
const sessionNoTempDir = 97

// errNoSessionHere: the container cannot hold a session: no writable temp
// dir (a read-only root without /dev/shm), or no mktemp and mkdir.
var errNoSessionHere = errors.New("no writable temp dir for an exec session")

// sessionRun runs argv in the pod container's session, opening it first
// when there is none or it ended.
func (b *Backend) sessionRun(ctx context.Context, pod target, argv []string, stdout, stderr io.Writer, tool bool) (int, error) {
	s, err := b.sessionFor(ctx, pod)
	if err != nil {
		return -1, err
	}
	if s == nil {
		// A container where the shell loop cannot live runs each command
		// in an exec of its own, as --kube-exec per-command; so does a
		// command after Cleanup closed the sessions (a late kill).
		return b.execStream(ctx, pod, argv, nil, stdout, stderr)
	}
	script := remote.Join(argv)
	if len(argv) == 3 && argv[0] == "sh" && argv[1] == "-c" {
		script = argv[2] // the session runs it with sh -c itself
	}
	return s.run(ctx, script, tool, stdout, stderr)
}

// sessionFor returns pod's session, opening one when it has none or its
// stream ended; nil and no error: run the command in an exec of its own.
func (b *Backend) sessionFor(ctx context.Context, pod target) (*session, error) {
	key := pod.pod + "\x00" + pod.containerName()
	b.mu.Lock()
	if b.sessionsClosed {
		b.mu.Unlock()
		return nil, nil
	}
	slot := b.sessions[key]
	if slot == nil {
		slot = newSessionSlot()
		b.sessions[key] = slot
	}
	b.mu.Unlock()
	if err := slot.acquire(ctx); err != nil {
		return nil, err
	}
	s, found, err := b.openSlot(ctx, pod, slot)
	slot.release()
	if found { // said once, out of the lock: a slow progress writer holds no caller
		b.progressf("pod %s: %v (or no mktemp and mkdir); an exec per command there", pod, errNoSessionHere)
	}
	return s, err
}

// openSlot returns slot's session, opening one when it has none or its
// stream ended; the caller holds the slot's lock. foundNone: this call
// found the container cannot hold one.
func (b *Backend) openSlot(ctx context.Context, pod target, slot *sessionSlot) (_ *session, foundNone bool, _ error) {
	if slot.none {
		return nil, false, nil
	}
	if slot.s != nil && slot.s.alive() {
		return slot.s, false, nil
	}
	s, err := openSession(ctx, pod, func(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) error {
		code, err := b.execStream(ctx, pod, []string{"sh", "-c", script}, stdin, stdout, stderr)
		if err == nil && code == sessionNoTempDir {
			return errNoSessionHere
		}
		if err == nil && code != 0 {
			err = fmt.Errorf("the session's shell exited with %d", code)
		}
		return err
	})
	if errors.Is(err, errNoSessionHere) {
		slot.none = true
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	b.mu.Lock()
	closed := b.sessionsClosed
	b.mu.Unlock()
	if closed { // Cleanup came while it opened: it is not kept
		s.close()
		return nil, false, nil
	}
	slot.s = s
	return s, false, nil
}

// closeSessions ends every session (Cleanup): their shells exit once
// their commands have, or with their pods. A session being opened now is
// closed by its opener (sessionsClosed).
func (b *Backend) closeSessions() {
	b.mu.Lock()
	slots := b.sessions
	b.sessions = map[string]*sessionSlot{}
	b.sessionsClosed = true
	b.mu.Unlock()
	for _, slot := range slots {
		ctx, cancel := context.WithTimeout(context.Background(), sessionCloseBound)
		if slot.acquire(ctx) == nil {
			if slot.s != nil {
				slot.s.close()
			}
			slot.release()
		}
		cancel()
	}
}
