package nccl

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// LogRelay copies NCCL's log lines into the probe's output between the
// probe's own lines. NCCL writes its log from its own threads to stdout,
// block-buffered when stdout is a file: a 4 KiB block can end inside a
// line, and a table row printed meanwhile lands in the middle of it (seen
// on 2×H100: "vm:1532:153    33554432 …"). With NCCL_DEBUG_FILE, NCCL's
// file is line-buffered (src/debug.cc setlinebuf); the probe reads whole
// lines from it, from the one goroutine that also prints the table.
//
// The program's exits that skip deferred calls (the watchdog, a signal
// while NCCL blocks) call Close too, from another goroutine: hence the lock.
type LogRelay struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	partial []byte
	closed  bool
}

// NewLogRelay relays the NCCL_DEBUG_FILE at path ("": nothing to relay).
func NewLogRelay(path string) *LogRelay { return &LogRelay{path: path} }

// CopyTo writes every whole line NCCL has written since the last call.
func (l *LogRelay) CopyTo(w io.Writer) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.copyTo(w)
}

func (l *LogRelay) copyTo(w io.Writer) {
	if l.path == "" || l.closed {
		return
	}
	if l.f == nil {
		f, err := os.Open(l.path)
		if err != nil {
			return // NCCL has not logged yet
		}
		l.f = f
	}
	b, _ := io.ReadAll(l.f)
	l.partial = append(l.partial, b...)
	if i := bytes.LastIndexByte(l.partial, '\n'); i >= 0 {
		_, _ = w.Write(l.partial[:i+1])
		l.partial = append(l.partial[:0], l.partial[i+1:]...)
	}
}

// Close copies what is left, a last line without its newline too, and
// removes the file; later calls do nothing.
func (l *LogRelay) Close(w io.Writer) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path == "" || l.closed {
		return
	}
	l.copyTo(w)
	l.closed = true
	if len(l.partial) > 0 {
		_, _ = w.Write(append(l.partial, '\n'))
	}
	if l.f != nil {
		_ = l.f.Close()
	}
	_ = os.Remove(l.path)
}
