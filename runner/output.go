package runner

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// output is one side's raw output file. stdout and stderr are written to it
// whole line by whole line (never interleaved mid-line), and lines are
// matched against the readiness text as they arrive.
type output struct {
	path string

	mu      sync.Mutex
	f       *os.File
	want    string        // readiness text ("" = none)
	seen    chan struct{} // closed when a line containing want arrived
	matched bool
	tail    []string // last lines, for error messages
	streams []*lineWriter
}

const tailLines = 8

func newOutput(path, want string) (*output, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &output{path: path, f: f, want: want, seen: make(chan struct{})}, nil
}

// stream returns a writer for one of the process's streams.
func (o *output) stream() io.Writer {
	w := &lineWriter{o: o}
	o.mu.Lock()
	o.streams = append(o.streams, w)
	o.mu.Unlock()
	return w
}

// reset truncates the file for a retried command (only the last attempt
// is kept, so the parser reads one run).
func (o *output) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.streams = nil // the dead attempt's partial line is dropped with it
	o.tail = nil
	_ = o.f.Truncate(0)
	_, _ = o.f.Seek(0, io.SeekStart)
}

func (o *output) writeLine(line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = o.f.Write(line)
	text := strings.TrimRight(string(line), "\r\n")
	o.tail = append(o.tail, text)
	if len(o.tail) > tailLines {
		o.tail = o.tail[1:]
	}
	if o.want != "" && !o.matched && strings.Contains(text, o.want) {
		o.matched = true
		close(o.seen)
	}
}

// lastLines returns the last lines written, for an error message.
func (o *output) lastLines() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.tail, " | ")
}

// sync writes out partial last lines (the process has exited).
func (o *output) sync() error {
	o.mu.Lock()
	ws := o.streams
	o.mu.Unlock()
	for _, w := range ws {
		w.flush()
	}
	return nil
}

// close flushes partial lines and closes the file.
func (o *output) close() error {
	_ = o.sync()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Close()
}

// lineWriter buffers a partial line until its newline arrives.
type lineWriter struct {
	o   *output
	mu  sync.Mutex
	buf []byte
}

// Write passes on every complete line and keeps the rest.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.o.writeLine(w.buf[:i+1])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) == 0 {
		w.buf = nil
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.o.writeLine(w.buf)
		w.buf = nil
	}
}
