package nccl

import (
	"bytes"
	"io"
	"os"
)

// logRelay copies NCCL's log lines into the probe's output between the
// probe's own lines. NCCL writes its log from its own threads to stdout,
// block-buffered when stdout is a file: a 4 KiB block can end inside a
// line, and a table row printed meanwhile lands in the middle of it (seen
// on 2×H100: "vm:1532:153    33554432 …"). With NCCL_DEBUG_FILE, NCCL's
// file is line-buffered (src/debug.cc setlinebuf); the probe reads whole
// lines from it, from the one goroutine that also prints the table.
type logRelay struct {
	path    string
	f       *os.File
	partial []byte
}

// copyTo writes every whole line NCCL has written since the last call.
func (l *logRelay) copyTo(w io.Writer) {
	if l == nil || l.path == "" {
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

// close copies what is left, a last line without its newline too, and
// removes the file.
func (l *logRelay) close(w io.Writer) {
	if l == nil || l.path == "" {
		return
	}
	l.copyTo(w)
	if len(l.partial) > 0 {
		_, _ = w.Write(append(l.partial, '\n'))
	}
	if l.f != nil {
		_ = l.f.Close()
	}
	_ = os.Remove(l.path)
}
